package interop

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBrokerDurableProton: Qpid Proton's python client (its Container's
// DurableSubscription, proton/broker_durable.py) against package broker:
// a durable subscription to a fan-out address detached with
// closed=false, 10 messages sent while it is away, attached again from
// a new connection with the same container id: each of the 20 messages
// accepted exactly once across the two attaches, nothing more after;
// closed at the end, the subscription is gone.
func TestBrokerDurableProton(t *testing.T) {
	if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
		skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
	}
	srv := amqptest.NewServer(t, &broker.Options{FanoutPrefixes: []string{"topic/"}})
	cmd := exec.Command(python, "proton/broker_durable.py")
	cmd.Env = append(os.Environ(), "AMQP_ADDR="+srv.Addr)
	out, err := cmd.CombinedOutput()
	t.Log(string(out))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		q, ok := srv.Broker.Queue("topic/durable")
		return ok && q.Accepted == 20 && q.Depth == 0 && q.Unsettled == 0 && q.Detached == 0
	}, 20*time.Second, time.Millisecond, "all 20 accepted, nothing kept")
	q, _ := srv.Broker.Queue("topic/durable")
	assert.Equal(t, uint64(20), q.Enqueued)
	assert.Equal(t, uint64(3), q.Redelivered, "the 3 unaccepted at the detach, sent again")
	attached, detached := srv.Broker.DurableLinks()
	assert.Zero(t, attached+detached, "closed: the subscription ended")
}
