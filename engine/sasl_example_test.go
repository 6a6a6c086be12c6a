package engine_test

import (
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

type opened struct{ engine.NopHandler }

func (opened) OnConnectionOpen(c *engine.Conn) {
	if !c.IsClient() {
		fmt.Printf("server: %q authenticated\n", c.Identity())
	}
}

// A server offering PLAIN and SCRAM-SHA-256, with the user's credentials
// stored salted; the client prefers SCRAM. The two engines are joined in
// memory: each one's output is fed to the other.
func ExampleSCRAMSHA256Server() {
	cred, err := engine.NewSCRAMCredentials("pencil", nil, engine.SCRAMIterations)
	if err != nil {
		panic(err)
	}
	users := map[string]engine.SCRAMCredentials{"user": cred}
	lookup := func(u string) (engine.SCRAMCredentials, bool) { c, ok := users[u]; return c, ok }
	srv := engine.NewServer(engine.Config{Auth: engine.Mechanisms(
		engine.PlainServer(nil), engine.SCRAMSHA256Server(lookup))}, opened{})
	cli := engine.NewClient(engine.Config{SASL: []engine.ClientMechanism{
		engine.SCRAMSHA256Client("user", "pencil"), engine.PlainClient("user", "pencil")}}, opened{})
	now := time.Now()
	for len(cli.Output())+len(srv.Output()) > 0 {
		if out := cli.Output(); len(out) > 0 {
			srv.Feed(out, now)
			cli.Written(len(out))
		}
		if out := srv.Output(); len(out) > 0 {
			cli.Feed(out, now)
			srv.Written(len(out))
		}
	}
	// Output:
	// server: "user" authenticated
}
