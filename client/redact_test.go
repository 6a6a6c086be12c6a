package client_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/require"
)

// No error of any stage of Dial carries the URL's password, as written
// or decoded: it is redacted as net/url's URL.Redacted does.
func TestDialRedactsPassword(t *testing.T) {
	ctx := testCtx(t)
	listen := func(t *testing.T, f func(net.Conn)) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { f(nc); nc.Close() }()
			}
		}()
		return ln.Addr().String()
	}
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	saslLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &driver.Server{Config: engine.Config{Auth: engine.Plain(func(u, p string) bool { return false }, false)}}
	go srv.Serve(saslLn)
	t.Cleanup(func() { srv.Close() })
	unblock := make(chan struct{})
	t.Cleanup(func() { close(unblock) })
	silent := listen(t, func(net.Conn) { <-unblock })
	garbage := listen(t, func(nc net.Conn) { nc.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) })

	allow := &client.ConnOptions{AllowInsecurePlain: true}
	for _, pass := range []string{"s3cr3t-pw", "s3cr%40t"} {
		for _, tc := range []struct {
			name, url, stage string
			opts             *client.ConnOptions
			timeout          time.Duration
		}{
			{"refused tcp", "amqp://app:" + pass + "@" + refused, "tcp", allow, 0},
			{"refused sasl", "amqp://app:" + pass + "@" + saslLn.Addr().String(), "sasl", allow, 0},
			{"insecure plain", "amqp://app:" + pass + "@" + saslLn.Addr().String(), "sasl", nil, 0},
			{"bad url", "amqp://app:" + pass + "@127.0.0.1:notaport", "tcp", allow, 0},
			{"bad url no port", "amqp://app:" + pass + "@[::1/x", "tcp", allow, 0},
			{"tls", "amqps://app:" + pass + "@" + garbage, "tls", nil, 0},
			{"silent", "amqp://app:" + pass + "@" + silent, "header", allow, time.Second},
			{"dialer", "ws://app:" + pass + "@" + refused + "/path", "dial", &client.ConnOptions{
				Dialer: func(ctx context.Context, addr string) (net.Conn, error) {
					return nil, errors.New("cannot reach " + addr)
				}}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := ctx
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				_, err := client.Dial(ctx, tc.url, tc.opts)
				require.Error(t, err)
				var de *client.DialError
				require.ErrorAs(t, err, &de)
				require.Equal(t, tc.stage, de.Stage, err.Error())
				for _, p := range []string{pass, strings.ReplaceAll(pass, "%40", "@")} {
					for e := error(err); e != nil; e = errors.Unwrap(e) {
						require.NotContains(t, e.Error(), p)
					}
					require.NotContains(t, de.Addr, p)
				}
				require.Contains(t, err.Error(), "xxxxx", err.Error())
				t.Log(err)
			})
		}
	}
}

// SASL PLAIN over a connection without TLS is refused, before anything
// is sent, unless ConnOptions.AllowInsecurePlain allows it.
func TestInsecurePlain(t *testing.T) {
	ctx := testCtx(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &driver.Server{Config: engine.Config{Auth: engine.Plain(func(u, p string) bool { return u == "u" && p == "p" }, false)}}
	go srv.Serve(ln)
	defer srv.Close()
	url := "amqp://u:p@" + ln.Addr().String()

	_, err = client.Dial(ctx, url, nil)
	require.ErrorIs(t, err, client.ErrInsecurePlain)
	var de *client.DialError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "sasl", de.Stage)
	_, err = client.Dial(ctx, ln.Addr().String(), &client.ConnOptions{SASLType: client.SASLTypePlain("u", "p")})
	require.ErrorIs(t, err, client.ErrInsecurePlain)
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	_, err = client.NewConn(ctx, nc, &client.ConnOptions{SASLType: client.SASLTypePlain("u", "p")})
	require.ErrorIs(t, err, client.ErrInsecurePlain)

	c, err := client.Dial(ctx, url, &client.ConnOptions{AllowInsecurePlain: true})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	// Other mechanisms need nothing.
	c, err = client.Dial(ctx, "amqp://"+ln.Addr().String(), &client.ConnOptions{SASLType: client.SASLTypeAnonymous()})
	if err == nil {
		c.Close()
	} else {
		require.NotErrorIs(t, err, client.ErrInsecurePlain)
	}
}

// SCRAM-SHA-256 and XOAUTH2 are chosen by SASLType; XOAUTH2's token,
// sent as it is, needs TLS or AllowInsecurePlain as PLAIN's password
// does, SCRAM's password never leaves this end.
func TestSASLMechanisms(t *testing.T) {
	ctx := testCtx(t)
	creds, err := engine.NewSCRAMCredentials("pw", []byte("salt-salt-salt"), 4096)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &driver.Server{Config: engine.Config{Auth: engine.Mechanisms(
		engine.SCRAMSHA256Server(func(user string) (engine.SCRAMCredentials, bool) { return creds, user == "u" }),
		engine.XOAUTH2Server(func(user, token string) (string, error) {
			if user == "u" && token == "tok" {
				return user, nil
			}
			return "", errors.New("bad token")
		}))}}
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()

	c, err := client.Dial(ctx, addr, &client.ConnOptions{SASLType: client.SASLTypeSCRAMSHA256("u", "pw")})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = client.Dial(ctx, addr, &client.ConnOptions{SASLType: client.SASLTypeSCRAMSHA256("u", "wrong")})
	var de *client.DialError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "sasl", de.Stage)

	_, err = client.Dial(ctx, addr, &client.ConnOptions{SASLType: client.SASLTypeXOAUTH2("u", "tok")})
	require.ErrorIs(t, err, client.ErrInsecurePlain)
	c, err = client.Dial(ctx, addr, &client.ConnOptions{SASLType: client.SASLTypeXOAUTH2("u", "tok"), AllowInsecurePlain: true})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = client.Dial(ctx, addr, &client.ConnOptions{SASLType: client.SASLTypeXOAUTH2("u", "forged"), AllowInsecurePlain: true})
	require.ErrorAs(t, err, &de)
	require.Equal(t, "sasl", de.Stage)
	require.NotContains(t, err.Error(), "forged")
}
