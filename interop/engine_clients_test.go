package interop

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEngineClients runs Qpid Proton's python client (proton/
// engine_client.py) and rhea (rhea/engine_client.js) against
// examples/broker (see engine_test.go), each through its own amqpspy:
// unsettled and pre-settled senders, a 100 KB message over 4 KiB frames,
// an unsettled and a pre-settled receiver, every message compared byte
// for byte by the client and on the recorded wire.
func TestEngineClients(t *testing.T) {
	tg := engineTargetFor(t)
	for _, c := range []struct {
		name string
		prog string
		args []string
	}{
		{"proton", python, []string{"proton/engine_client.py"}},
		{"rhea", "node", []string{"rhea/engine_client.js"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			switch c.name {
			case "proton":
				if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
					skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
				}
			case "rhea":
				needNodeModule(t, "rhea")
			}
			if _, err := exec.LookPath(c.prog); err != nil {
				skip(t, "%s is not installed", c.prog)
			}
			spy := spyOn(t, tg.addr)
			cmd := exec.Command(c.prog, c.args...)
			cmd.Env = append(os.Environ(), "AMQP_ADDR="+spy.Addr, "AMQP_QUEUE="+tg.queue("engine-"+c.name+"-"+runID),
				"AMQP_USER="+tg.user, "AMQP_PASSWORD="+tg.pass, "COUNT=200")
			out, err := cmd.CombinedOutput()
			t.Log(string(out))
			spy.finish(engineCheck{messages: true, rabbit: tg.rabbit})
			require.NoError(t, err, "the %s client failed", c.name)
		})
	}
}
