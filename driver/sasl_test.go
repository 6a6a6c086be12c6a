package driver

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// TestSASLHandshakeTimeoutDriver: over TCP, a client that stops after
// SCRAM's first challenge is cut off by the Server at the handshake
// time-out (200 ms here): its connection is closed, and the server's
// handler hears of it.
func TestSASLHandshakeTimeoutDriver(t *testing.T) {
	cred, err := engine.NewSCRAMCredentials("pencil", []byte("salt of the test"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan *engine.Error, 1)
	srv := &Server{Handler: closeHandler{ch: closed}, Config: engine.Config{HandshakeTimeout: 200 * time.Millisecond,
		Auth: engine.Mechanisms(engine.SCRAMSHA256Server(func(string) (engine.SCRAMCredentials, bool) { return cred, true }))}}
	go srv.Serve(ln)
	defer srv.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write(append(frame.AppendProtocolHeader(nil, frame.HeaderSASL), saslFrame(nil, func(b []byte) []byte {
		return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("SCRAM-SHA-256"), InitialResponse: []byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO")})
	})...))
	got, err := io.ReadAll(nc) // header, mechanisms, challenge, then the end
	if err != nil {
		t.Fatal(err)
	}
	rd := frame.NewReader(bytes.NewReader(got))
	n := 0
	for ; ; n++ {
		if _, err = rd.Next(); err != nil {
			break
		}
	}
	if n != 3 || err != io.EOF {
		t.Fatalf("%d frames before the end, %v", n, err)
	}
	if e := <-closed; e == nil || e.Condition != frame.CondResourceLimitExceeded {
		t.Fatal(e)
	}
}

type closeHandler struct {
	engine.NopHandler
	ch chan *engine.Error
}

func (h closeHandler) OnConnectionClose(_ *engine.Conn, e *engine.Error) { h.ch <- e }

// saslFrame appends a SASL frame of the body appendBody writes.
func saslFrame(b []byte, appendBody func([]byte) []byte) []byte {
	start := len(b)
	b = frame.BeginFrame(b, frame.TypeSASL, 0)
	b = appendBody(b)
	return frame.EndFrame(b, start)
}
