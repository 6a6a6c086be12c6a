package ws

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/coder/websocket"
)

// echo sends every message it receives back on the connection's sending
// link (the peer's receiver), settled.
type echo struct{ engine.NopHandler }

type echoConn struct {
	out     *engine.Link
	pending [][]byte
}

func (echo) OnConnectionOpen(c *engine.Conn) { c.Context = &echoConn{} }
func (echo) OnLinkAttach(l *engine.Link) {
	if l.IsSender() {
		l.Conn().Context.(*echoConn).out = l
	}
}
func (echo) OnDelivery(l *engine.Link, d engine.Delivery) {
	ec := l.Conn().Context.(*echoConn)
	ec.pending = append(ec.pending, bytes.Clone(d.Payload))
	ec.pump()
}
func (echo) OnFlow(l *engine.Link)     { l.Conn().Context.(*echoConn).pump() }
func (echo) OnWritable(c *engine.Conn) { c.Context.(*echoConn).pump() }

func (ec *echoConn) pump() {
	for ec.out != nil && len(ec.pending) > 0 {
		if _, err := ec.out.Send(nil, ec.pending[0], true); err != nil {
			return
		}
		ec.pending = ec.pending[1:]
	}
}

// roundTrip sends n messages to "echo", takes n back, and closes.
type roundTrip struct {
	engine.NopHandler
	n, sent, got, bad int
	done              chan error
}

func message(i int) []byte {
	p := fmt.Appendf(nil, "over a WebSocket %d", i)
	return append([]byte{0x00, 0x53, 0x75, 0xa0, byte(len(p))}, p...)
}

func (r *roundTrip) OnConnectionOpen(c *engine.Conn) { c.Begin() }
func (r *roundTrip) OnSessionBegin(s *engine.Session) {
	s.AttachReceiver(engine.LinkOptions{Address: "echo", Credit: 100, AutoAccept: true})
	s.AttachSender(engine.LinkOptions{Address: "echo"})
}
func (r *roundTrip) OnFlow(l *engine.Link) {
	for l.IsSender() && r.sent < r.n {
		if _, err := l.Send(nil, message(r.sent), true); err != nil {
			return
		}
		r.sent++
	}
}
func (r *roundTrip) OnDelivery(l *engine.Link, d engine.Delivery) {
	if !bytes.Equal(d.Payload, message(r.got)) {
		r.bad++
	}
	if r.got++; r.got == r.n {
		l.Conn().Close(nil)
	}
}
func (r *roundTrip) OnConnectionClose(c *engine.Conn, e *engine.Error) {
	var err error
	switch {
	case e != nil:
		err = e
	case r.got != r.n || r.bad != 0:
		err = fmt.Errorf("got %d of %d, %d wrong", r.got, r.n, r.bad)
	}
	r.done <- err
}

func selfSigned(t *testing.T) (*tls.Config, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

// TestRoundTrip: the engine as client and server over ws:// and wss://,
// 1,000 messages each way, with SASL PLAIN over the WebSocket.
func TestRoundTrip(t *testing.T) {
	stls, pool := selfSigned(t)
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprint("tls=", secure), func(t *testing.T) {
			var cfg *tls.Config
			scheme := "ws://"
			if secure {
				cfg, scheme = stls, "wss://"
			}
			ln, err := Listen("127.0.0.1:0", cfg)
			if err != nil {
				t.Fatal(err)
			}
			srv := &driver.Server{Handler: echo{}, Config: engine.Config{Credit: 100, AutoAccept: true,
				Auth: engine.Plain(func(u, p string) bool { return u == "u" && p == "p" }, false)}}
			go srv.Serve(ln)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			nc, err := Dial(ctx, scheme+ln.Addr().String()+"/", &DialOptions{TLSConfig: &tls.Config{RootCAs: pool}})
			if err != nil {
				t.Fatal(err)
			}
			rt := &roundTrip{n: 1000, done: make(chan error, 1)}
			d := driver.NewDriver(nc, engine.NewClient(engine.Config{Username: "u", Password: "p"}, rt))
			go d.Run(ctx)
			select {
			case err := <-rt.done:
				if err != nil {
					t.Fatal(err)
				}
			case <-ctx.Done():
				t.Fatal("time-out")
			}
			if err := d.Wait(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d messages round-tripped", scheme, rt.got)
		})
	}
}

// TestBinding: a client without the subprotocol is refused before the
// upgrade; a text message ends the connection.
func TestBinding(t *testing.T) {
	ln, err := Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("without the subprotocol: %v %v", resp, err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/", &websocket.DialOptions{Subprotocols: []string{"amqp"}})
	if err != nil {
		t.Fatal(err)
	}
	sc := <-accepted
	if err := c.Write(ctx, websocket.MessageText, []byte("AMQP")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := sc.Read(buf); err == nil {
		t.Fatalf("a text message was read: %q", buf[:n])
	}
	// A server that does not choose "amqp" is refused by Dial.
	plain := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err == nil {
			c.CloseNow()
		}
	})}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go plain.Serve(pl)
	defer plain.Close()
	if _, err := Dial(ctx, "ws://"+pl.Addr().String()+"/", nil); err == nil {
		t.Fatal("a server without the subprotocol was taken")
	}
	ln.Close()
	if _, err := ln.Accept(); err != ErrClosed {
		t.Fatal(err)
	}
}

// TestHeaderTimeout: a client that trickles its upgrade request, a byte
// at a time, is cut off by a short HeaderTimeout, over ws:// and before
// its TLS handshake over wss:// (when it ends is not asserted: only that
// the server closes the connection while the client still writes).
func TestHeaderTimeout(t *testing.T) {
	tlsConf, _ := selfSigned(t)
	for _, tc := range []struct {
		name string
		tls  *tls.Config
	}{{"ws", nil}, {"wss", tlsConf}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := ListenWith("127.0.0.1:0", &ListenOptions{TLSConfig: tc.tls, HeaderTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			// The server reads nothing back until the request's end, and
			// over TLS it waits for a ClientHello: either way, what
			// ends the read below is the server closing.
			closed := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, nc)
				closed <- err
			}()
			req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: amqp\r\n\r\n"
			if tc.tls != nil {
				// A TLS handshake record of 16,383 bytes, trickled: the
				// ClientHello never ends.
				req = "\x16\x03\x01\x3f\xff" + strings.Repeat("\x00", 16383)
			}
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			deadline := time.After(time.Minute)          // a hang's report, not a timing
			for i := 0; ; i = (i + 1) % (len(req) - 2) { // never the header's (or the record's) end
				select {
				case <-closed:
					return
				case <-deadline:
					t.Fatal("the trickled upgrade is still open after a minute")
				case <-tick.C:
					nc.Write([]byte{req[i]})
				}
			}
		})
	}
}

// TestDialUserinfo: the URL's user and password are not sent on the
// upgrade (net/http would send them as Basic authentication, in the
// clear over ws://) unless DialOptions.BasicAuth; and no error of Dial
// carries the password.
func TestDialUserinfo(t *testing.T) {
	auth := make(chan string, 1)
	ln := NewListener(nil)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.Header.Get("Authorization")
		ln.ServeHTTP(w, r)
	})}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(pl)
	defer srv.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws://alice:s3cret@" + pl.Addr().String() + "/"
	for _, tc := range []struct {
		o    *DialOptions
		want string
	}{
		{nil, ""},
		{&DialOptions{Header: http.Header{"X-Other": {"1"}}}, ""},
		{&DialOptions{BasicAuth: true}, "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))},
	} {
		c, err := Dial(ctx, u, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if got := <-auth; got != tc.want {
			t.Errorf("options %+v: Authorization %q, want %q", tc.o, got, tc.want)
		}
	}
	// Errors: a URL that does not parse, a port nothing listens on, a
	// server that is not a WebSocket one.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	notWS := &http.Server{Handler: http.NotFoundHandler()}
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go notWS.Serve(nl)
	defer notWS.Close()
	for _, bad := range []string{"ws://alice:s3cret@host:port/", "ws://alice:s3cret@" + deadAddr + "/",
		"ws://alice:s3cret@" + nl.Addr().String() + "/", "wss://alice:s3cret@" + deadAddr + "/%zz"} {
		for _, o := range []*DialOptions{nil, {BasicAuth: true}} {
			_, err := Dial(ctx, bad, o)
			if err == nil {
				t.Fatalf("%s: no error", bad)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: the error carries the password: %v", bad, err)
			}
		}
	}
}

// TestIdleTimeout: a connection that made a request without upgrading
// (refused: no subprotocol) and then says nothing is closed by a short
// IdleTimeout.
func TestIdleTimeout(t *testing.T) {
	ln, err := ListenWith("127.0.0.1:0", &ListenOptions{IdleTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(time.Minute)) // a hang's report, not a timing
	if _, err := nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(nc) // the 400, then the end the idle time-out brings
	if err != nil {
		t.Fatalf("%v after %q", err, got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 400 ") || strings.Contains(string(got), "Connection: close") {
		t.Fatalf("response %q", got)
	}
}
