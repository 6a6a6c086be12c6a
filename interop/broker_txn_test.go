package interop

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/stretchr/testify/require"
)

// TestBrokerTxnProton: Qpid Proton's python client (its Container's
// transactions, proton/broker_txn.py) against package broker: a
// transaction of 10 sends committed leaves 10 messages in the queue,
// rolled back none; 10 messages received and accepted in a transaction
// rolled back are all back in the queue, committed they are gone.
func TestBrokerTxnProton(t *testing.T) {
	if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
		skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
	}
	srv := amqptest.NewServer(t, &broker.Options{})
	run := func(scenario string) {
		cmd := exec.Command(python, "proton/broker_txn.py")
		cmd.Env = append(os.Environ(), "AMQP_ADDR="+srv.Addr, "SCENARIO="+scenario)
		out, err := cmd.CombinedOutput()
		t.Log(string(out))
		require.NoError(t, err, scenario)
	}
	depth := func() (waiting, unsettled int) {
		q, ok := srv.Queue("txq")
		if !ok {
			return 0, 0
		}
		return q.Depth, q.Unsettled
	}
	settle := func(want int) {
		require.Eventually(t, func() bool { d, u := depth(); return d == want && u == 0 }, 20*time.Second, time.Millisecond,
			"want %d in the queue", want)
	}
	run("send-rollback")
	settle(0)
	run("send-commit")
	settle(10)
	run("recv-rollback")
	settle(10)
	run("recv-commit")
	settle(0)
}
