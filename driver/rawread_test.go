package driver

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// The reader goroutine reads a socket with raw system calls
// (rawWriter.read): what it reads, the peer's end and a failure reach
// the Conn as they did through the connection's Read, and a failure's
// text reads as net's ("read tcp a->b: read: connection reset by peer").
func TestRawReadEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*net.TCPConn)
		want string
	}{
		{"eof", func(c *net.TCPConn) { c.Close() }, "peer sent EOF"},
		{"reset", func(c *net.TCPConn) { c.SetLinger(0); c.Close() }, ": read: connection reset by peer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			ended := make(chan error, 1)
			srv := &Server{Config: engine.Config{HandshakeTimeout: time.Minute}, Handler: engine.NopHandler{},
				ConnStart: func(net.Conn) bool { return true }, ConnEnd: func(_ net.Conn, err error) { ended <- err }}
			go srv.Serve(ln)
			defer srv.Close()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			c := nc.(*net.TCPConn)
			if _, err := c.Write([]byte("AMQP\x00\x01\x00\x00")); err != nil {
				t.Fatal(err)
			}
			hdr := make([]byte, 8)
			if _, err := io.ReadFull(c, hdr); err != nil { // the server read the header: its reader is in a read
				t.Fatal(err)
			}
			tc.end(c)
			var got error
			select {
			case got = <-ended:
			case <-time.After(30 * time.Second):
				t.Fatal("the server's connection did not end")
			}
			if got == nil || !strings.Contains(got.Error(), tc.want) {
				t.Fatalf("the connection ended with %v, want one with %q", got, tc.want)
			}
			if tc.name == "reset" && !strings.Contains(got.Error(), "read tcp "+ln.Addr().String()+"->") {
				t.Fatalf("the connection ended with %v, want net's read error text", got)
			}
		})
	}
}
