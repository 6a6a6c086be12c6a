package engine

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// fuzzMechs are the server's mechanisms FuzzSASLServer drives, each by
// index. The SCRAM server's nonce is fixed, so that a seed's
// client-final reaches the proof check.
var fuzzMechs = []string{"ANONYMOUS", "PLAIN", "EXTERNAL", "SCRAM-SHA-256", "XOAUTH2"}

func fuzzAuth(t testing.TB) Authenticator {
	cred := rfcCredentials(t)
	scram := serverMech{"SCRAM-SHA-256", func(SASLPeer) (SASLExchange, error) {
		return &scramServer{lookup: func(u string) (SCRAMCredentials, bool) { return cred, u == "user" },
			nonce: func() string { return rfcServerNonce }}, nil
	}}
	return Mechanisms(AnonymousServer(), PlainServer(func(u, p string) bool { return u == "u" && p == "p" }),
		ExternalServer(nil), scram, XOAUTH2Server(func(user, token string) (string, error) {
			if token == "good" {
				return "", nil
			}
			return "", ErrAuth
		}))
}

// FuzzSASLServer runs each mechanism of the server on arbitrary
// responses: a sasl-init with the initial response, then up to two
// sasl-responses, each cut into reads of arbitrary size. Nothing
// panics, the output stays bounded, nothing is written once the
// connection is done, and the outcome ok is reached only with the
// credentials the server knows.
func FuzzSASLServer(f *testing.F) {
	cm := scramClientMech{user: "user", password: "pencil", nonce: func() string { return rfcClientNonce }}
	_, first, _ := cm.Start()
	f.Add(uint8(0), []byte("anonymous"), []byte(nil), []byte(nil), uint16(3))
	f.Add(uint8(1), []byte("\x00u\x00p"), []byte(nil), []byte(nil), uint16(7))
	f.Add(uint8(1), []byte("a\x00u\x00p\x00"), []byte(nil), []byte(nil), uint16(1))
	f.Add(uint8(2), []byte(""), []byte(nil), []byte(nil), uint16(100))
	f.Add(uint8(3), first, []byte(rfcClientFinal), []byte(nil), uint16(11))
	f.Add(uint8(3), []byte("y,a=x,n=us=3Der,r=abc,m=x"), []byte("c=biws,r=,p=AAAA"), []byte("x"), uint16(5))
	f.Add(uint8(4), []byte("user=alice\x01auth=Bearer good\x01\x01"), []byte(nil), []byte(nil), uint16(9))
	f.Add(uint8(4), []byte("user=alice\x01auth=Bearer bad\x01\x01"), []byte{}, []byte{}, uint16(9))
	auth := fuzzAuth(f)
	cert := []*x509.Certificate{{Subject: pkix.Name{CommonName: "cn"}}}
	f.Fuzz(func(t *testing.T, mech uint8, init, r1, r2 []byte, read uint16) {
		name := fuzzMechs[int(mech)%len(fuzzMechs)]
		c := NewServer(Config{Auth: auth, PeerCertificates: cert, MaxFrameSize: 4096}, nil)
		r := newRaw(t, c)
		in := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
		in = saslFrame(in, func(b []byte) []byte {
			return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte(name), InitialResponse: init})
		})
		for _, resp := range [][]byte{r1, r2} {
			if resp != nil {
				in = saslFrame(in, func(b []byte) []byte { return frame.AppendSASLResponse(b, frame.SASLResponse{Response: resp}) })
			}
		}
		step := int(read%256) + 1
		for p := in; len(p) > 0; {
			n := min(step, len(p))
			wasDone, before := c.Done(), len(r.in)
			r.feed(p[:n])
			if wasDone && len(r.in) != before {
				t.Fatal("wrote after done")
			}
			p = p[n:]
		}
		if len(r.in) > 2*len(in)+1024 {
			t.Fatalf("%d bytes written for %d read", len(r.in), len(in))
		}
		if id := c.Identity(); id != "" {
			want := map[string]string{"ANONYMOUS": "anonymous", "PLAIN": "u", "EXTERNAL": "cn", "SCRAM-SHA-256": "user", "XOAUTH2": ""}[name]
			if name == "XOAUTH2" || id != want {
				// XOAUTH2's identity is the user named, with the good token.
				if user, token, ok := parseXOAUTH2(init); name != "XOAUTH2" || !ok || token != "good" || id != user {
					t.Fatalf("%s authenticated %q", name, id)
				}
			}
		}
	})
}
