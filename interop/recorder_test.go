package interop

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoServer answers every connection by writing back what it reads,
// prefixed with "re:" once.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write([]byte("re:"))
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestRecorder: bytes pass unchanged both ways and both directions are
// kept per connection, in accept order; no broker needed.
func TestRecorder(t *testing.T) {
	up := echoServer(t)
	for _, useTLS := range []bool{false, true} {
		var cfg *tls.Config
		var pem []byte
		if useTLS {
			var err error
			cfg, pem, err = SelfSigned()
			require.NoError(t, err)
		}
		tap, err := NewTap(up, cfg)
		require.NoError(t, err)
		payloads := [][]byte{[]byte("AMQP\x00\x01\x00\x00first"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 50000)}
		for _, p := range payloads {
			var c net.Conn
			if useTLS {
				pool := x509.NewCertPool()
				require.True(t, pool.AppendCertsFromPEM(pem))
				c, err = tls.Dial("tcp", tap.Addr(), &tls.Config{RootCAs: pool, ServerName: "localhost"})
			} else {
				c, err = net.Dial("tcp", tap.Addr())
			}
			require.NoError(t, err)
			go func() {
				c.Write(p)
				if cw, ok := c.(interface{ CloseWrite() error }); ok {
					cw.CloseWrite()
				}
			}()
			got, err := io.ReadAll(c)
			require.NoError(t, err)
			assert.Equal(t, append([]byte("re:"), p...), got, "tls %v", useTLS)
			c.Close()
		}
		require.NoError(t, tap.Close())
		conns := tap.Conns()
		require.Len(t, conns, len(payloads))
		for i, p := range payloads {
			assert.Equal(t, p, conns[i].Client, "tls %v conn %d client", useTLS, i)
			assert.Equal(t, append([]byte("re:"), p...), conns[i].Server, "tls %v conn %d server", useTLS, i)
		}
	}
}
