package interop

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/stretchr/testify/require"
)

// TestPackageBrokerClients runs Qpid Proton's python client
// (proton/broker_package.py) and rhea (rhea/broker_package.js) against
// package broker, started through amqptest with queues bounded at 10
// messages: a queue, fan-out, a dynamic reply queue, and flow control (a
// sender held back by credit at the bound, then resumed).
func TestPackageBrokerClients(t *testing.T) {
	const bound = 10
	for _, c := range []struct {
		name string
		prog string
		args []string
	}{
		{"proton", python, []string{"proton/broker_package.py"}},
		{"rhea", "node", []string{"rhea/broker_package.js"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			switch c.name {
			case "proton":
				if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
					skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
				}
			case "rhea":
				if _, err := exec.LookPath("npm"); err != nil {
					skip(t, "npm is not installed")
				}
				needNodeModule(t, "rhea")
			}
			if _, err := exec.LookPath(c.prog); err != nil {
				skip(t, "%s is not installed", c.prog)
			}
			srv := amqptest.NewServer(t, &broker.Options{MaxMessages: bound, Credit: 2, FanoutPrefixes: []string{"topic/"}})
			cmd := exec.Command(c.prog, c.args...)
			cmd.Env = append(os.Environ(), "AMQP_ADDR="+srv.Addr, "BOUND="+strconv.Itoa(bound))
			out, err := cmd.CombinedOutput()
			t.Log(string(out))
			for _, q := range srv.Queues() {
				t.Logf("%s: depth %d, unsettled %d, enqueued %d, accepted %d, blocked %d, refused %d", q.Name, q.Depth, q.Unsettled, q.Enqueued, q.Accepted, q.Blocked, q.Refused)
			}
			require.NoError(t, err, "the %s client failed", c.name)
			for _, q := range srv.Queues() {
				require.Zero(t, q.Refused, "%s: nothing is refused", q.Name)
				require.Zero(t, q.Depth, "%s: every message was taken", q.Name)
			}
		})
	}
}
