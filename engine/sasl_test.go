package engine

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/frame"
)

// RFC 7677 §3: the SCRAM-SHA-256 exchange of user "user", password
// "pencil".
const (
	rfcClientNonce = "rOprNGfwEbeRWgbNEkqO"
	rfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	rfcSalt        = "W22ZaJ0SNY7soEsUEjb6gQ=="
	rfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
	rfcServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfcClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
)

func rfcCredentials(t testing.TB) SCRAMCredentials {
	salt, err := base64.StdEncoding.DecodeString(rfcSalt)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := NewSCRAMCredentials("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

func TestSCRAMVector(t *testing.T) {
	// The client, with the RFC's nonce, writes the RFC's messages.
	cm := scramClientMech{user: "user", password: "pencil", nonce: func() string { return rfcClientNonce }}
	cx, first, err := cm.Start()
	if err != nil || string(first) != rfcClientFirst {
		t.Fatalf("client-first %q %v", first, err)
	}
	final, err := cx.Challenge([]byte(rfcServerFirst))
	if err != nil || string(final) != rfcClientFinal {
		t.Fatalf("client-final %q %v", final, err)
	}
	if err := cx.Outcome([]byte(rfcServerFinal)); err != nil {
		t.Fatal(err)
	}
	// The server, with the RFC's nonce and the credentials stored
	// salted, answers with the RFC's messages.
	cred := rfcCredentials(t)
	sx := &scramServer{lookup: func(u string) (SCRAMCredentials, bool) { return cred, u == "user" },
		nonce: func() string { return rfcServerNonce }}
	st, err := sx.Step([]byte(rfcClientFirst))
	if err != nil || st.Done || string(st.Challenge) != rfcServerFirst {
		t.Fatalf("server-first %+v %v", st, err)
	}
	st, err = sx.Step([]byte(rfcClientFinal))
	if err != nil || !st.Done || string(st.Data) != rfcServerFinal || st.Identity != "user" {
		t.Fatalf("server-final %+v %v", st, err)
	}
	// A server that does not know the credentials is caught by its
	// signature.
	cx, _, _ = cm.Start()
	cx.Challenge([]byte(rfcServerFirst))
	if err := cx.Outcome([]byte("v=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))); err == nil {
		t.Fatal("a wrong server signature was accepted")
	}
	if err := cx.Outcome(nil); err == nil {
		t.Fatal("an outcome without the server signature was accepted")
	}
	// A proof changed by one bit is refused.
	sx = &scramServer{lookup: func(string) (SCRAMCredentials, bool) { return cred, true }, nonce: func() string { return rfcServerNonce }}
	sx.Step([]byte(rfcClientFirst))
	bad := []byte(rfcClientFinal)
	bad[len(bad)-5] ^= 1
	if _, err := sx.Step(bad); err == nil {
		t.Fatal("a changed proof was accepted")
	}
}

// saslPair runs a client against a server in memory and reports whether
// both opened, the server's identity and the client's error.
func saslPair(t *testing.T, ccfg, scfg Config) (bool, string, *Error) {
	t.Helper()
	cli, srv := &recorder{}, &recorder{}
	p := newPipe(t, ccfg, scfg, cli, srv)
	p.run()
	if p.c.Done() && !p.s.Done() {
		p.s.CloseRead()
	}
	if p.s.Done() && !p.c.Done() {
		p.c.CloseRead()
	}
	return has(cli.log, "open") && has(srv.log, "open"), p.s.Identity(), p.c.Err()
}

func TestSASLMechanisms(t *testing.T) {
	cred, err := NewSCRAMCredentials("pencil", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(u string) (SCRAMCredentials, bool) { return cred, u == "user" }
	tokens := func(user, token string) (string, error) {
		if token == "good-token" {
			return "", nil
		}
		return "", ErrAuth
	}
	plain := func(u, p string) bool { return u == "plainuser" && p == "pw" }
	all := Config{Auth: Mechanisms(PlainServer(plain), SCRAMSHA256Server(lookup), XOAUTH2Server(tokens))}
	cases := []struct {
		name string
		mech []ClientMechanism
		scfg Config
		ok   bool
		id   string
		cond frame.Condition // the client's error when refused
	}{
		{"scram", []ClientMechanism{SCRAMSHA256Client("user", "pencil")}, all, true, "user", 0},
		{"scram wrong password", []ClientMechanism{SCRAMSHA256Client("user", "pen")}, all, false, "", frame.CondUnauthorizedAccess},
		{"scram unknown user", []ClientMechanism{SCRAMSHA256Client("who", "pencil")}, all, false, "", frame.CondUnauthorizedAccess},
		{"scram escaped name", []ClientMechanism{SCRAMSHA256Client("a=b,c", "pencil")},
			Config{Auth: Mechanisms(SCRAMSHA256Server(func(u string) (SCRAMCredentials, bool) { return cred, u == "a=b,c" }))}, true, "a=b,c", 0},
		{"xoauth2", []ClientMechanism{XOAUTH2Client("alice", "good-token")}, all, true, "alice", 0},
		{"xoauth2 bad token", []ClientMechanism{XOAUTH2Client("alice", "bad-token")}, all, false, "", frame.CondUnauthorizedAccess},
		{"plain", []ClientMechanism{PlainClient("plainuser", "pw")}, all, true, "plainuser", 0},
		// The client's preference among what the server offers: the
		// server lists PLAIN first, the client prefers SCRAM.
		{"client prefers scram", []ClientMechanism{XOAUTH2Client("alice", "bad"), SCRAMSHA256Client("user", "pencil"), PlainClient("plainuser", "pw")},
			Config{Auth: Mechanisms(PlainServer(plain), SCRAMSHA256Server(lookup))}, true, "user", 0},
		{"none offered", []ClientMechanism{XOAUTH2Client("alice", "good-token")}, Config{Auth: Plain(plain, false)}, false, "", frame.CondNotImplemented},
		{"anonymous default", []ClientMechanism{AnonymousClient("")}, Config{}, true, "anonymous", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, id, cerr := saslPair(t, Config{SASL: tc.mech}, tc.scfg)
			if ok != tc.ok || id != tc.id {
				t.Fatalf("opened %v identity %q, want %v %q (client error %v)", ok, id, tc.ok, tc.id, cerr)
			}
			if !tc.ok && (cerr == nil || cerr.Condition != tc.cond) {
				t.Fatalf("client error %v, want %v", cerr, tc.cond)
			}
		})
	}
}

// TestSCRAMServerUnproven: a server that says ok without knowing the
// credentials (here: one whose SCRAM passes every proof) is refused by
// the client, which checks the server's signature.
func TestSCRAMServerUnproven(t *testing.T) {
	ok, _, cerr := saslPair(t, Config{SASL: []ClientMechanism{SCRAMSHA256Client("user", "pencil")}},
		Config{Auth: Mechanisms(serverMech{"SCRAM-SHA-256", func(SASLPeer) (SASLExchange, error) { return &liar{}, nil }})})
	if ok || cerr == nil || cerr.Condition != frame.CondUnauthorizedAccess || !strings.Contains(cerr.Description, "signature") {
		t.Fatalf("opened %v, client error %v", ok, cerr)
	}
}

type liar struct{ n int }

func (l *liar) Step(resp []byte) (SASLStep, error) {
	l.n++
	if l.n == 1 { // extend the client's nonce, as a real server would
		_, cnonce, _ := strings.Cut(string(resp), ",r=")
		return SASLStep{Challenge: []byte("r=" + cnonce + "srv,s=" + rfcSalt + ",i=4096")}, nil
	}
	return SASLStep{Done: true, Identity: "user", Data: []byte("v=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))}, nil
}

// TestSASLHandshakeTimeout: a client that starts a SCRAM exchange and
// never sends its final message is cut off at the handshake time-out,
// with the outcome of nothing (there is no close below the AMQP layer).
func TestSASLHandshakeTimeout(t *testing.T) {
	cred := rfcCredentials(t)
	srv := &recorder{}
	c := NewServer(Config{HandshakeTimeout: 5 * time.Second,
		Auth: Mechanisms(SCRAMSHA256Server(func(string) (SCRAMCredentials, bool) { return cred, true }))}, srv)
	r := newRaw(t, c)
	r.feed(append(frame.AppendProtocolHeader(nil, frame.HeaderSASL), saslFrame(nil, func(b []byte) []byte {
		return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("SCRAM-SHA-256"), InitialResponse: []byte(rfcClientFirst)})
	})...))
	fs := r.frames()
	if len(fs) != 3 { // header, mechanisms, challenge
		t.Fatalf("%d frames", len(fs))
	}
	if _, err := frame.ParseSASLChallenge(fs[2].Body); err != nil {
		t.Fatal(err)
	}
	if next := c.Tick(r.now.Add(4 * time.Second)); !next.Equal(r.now.Add(5*time.Second)) || c.Closed() {
		t.Fatalf("next tick %v, closed %v", next, c.Closed())
	}
	c.Tick(r.now.Add(5 * time.Second))
	if !c.Done() || c.Err() == nil || c.Err().Condition != frame.CondResourceLimitExceeded {
		t.Fatalf("done %v err %v", c.Done(), c.Err())
	}
	if !has(srv.log, "close") {
		t.Fatal(srv.log)
	}
}

// TestSASLOutOfOrder: a sasl-response with no exchange under way, and a
// second sasl-init, end the connection with sys-perm.
func TestSASLOutOfOrder(t *testing.T) {
	cred := rfcCredentials(t)
	for _, second := range []func([]byte) []byte{
		func(b []byte) []byte {
			return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("SCRAM-SHA-256")})
		},
		func(b []byte) []byte { return frame.AppendSASLOutcome(b, frame.SASLOutcome{Code: frame.SASLOk}) },
	} {
		c := NewServer(Config{Auth: Mechanisms(SCRAMSHA256Server(func(string) (SCRAMCredentials, bool) { return cred, true }))}, nil)
		r := newRaw(t, c)
		b := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
		b = saslFrame(b, func(b []byte) []byte {
			return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("SCRAM-SHA-256"), InitialResponse: []byte(rfcClientFirst)})
		})
		r.feed(saslFrame(b, second))
		fs := r.frames()
		o, err := frame.ParseSASLOutcome(fs[len(fs)-1].Body)
		if err != nil || o.Code != frame.SASLSysPerm || !c.Done() {
			t.Fatalf("%+v %v done %v", o, err, c.Done())
		}
	}
	c := NewServer(Config{}, nil)
	r := newRaw(t, c)
	r.feed(saslFrame(frame.AppendProtocolHeader(nil, frame.HeaderSASL), func(b []byte) []byte {
		return frame.AppendSASLResponse(b, frame.SASLResponse{Response: []byte{}})
	}))
	if !c.Done() || !errors.Is(c.Err(), NewError(frame.CondNotAllowed, "")) {
		t.Fatal(c.Err())
	}
}

// TestSCRAMUnknownUser: an unknown user is challenged like a known one,
// with a salt that stays the same for the name, and refused at the
// proof.
func TestSCRAMUnknownUser(t *testing.T) {
	first := func(user string) string {
		sx := &scramServer{lookup: func(string) (SCRAMCredentials, bool) { return SCRAMCredentials{}, false },
			nonce: func() string { return rfcServerNonce }}
		st, err := sx.Step([]byte("n,,n=" + user + ",r=" + rfcClientNonce))
		if err != nil || st.Done {
			t.Fatalf("unknown user %s: %+v %v", user, st, err)
		}
		final := "c=biws,r=" + rfcClientNonce + rfcServerNonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32))
		if _, err := sx.Step([]byte(final)); err == nil {
			t.Fatal("unknown user accepted")
		}
		return string(st.Challenge)
	}
	a, b, c := first("nobody"), first("nobody"), first("someone")
	if a != b || a == c || !strings.Contains(a, ",i=4096") {
		t.Fatalf("challenges %q %q %q", a, b, c)
	}
}
