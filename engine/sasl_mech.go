package engine

import (
	"bytes"
	"crypto/x509"
	"errors"
)

// The one-step mechanisms (ANONYMOUS, RFC 4505; PLAIN, RFC 4616;
// EXTERNAL, RFC 4422 appendix A) and XOAUTH2 (Google's, as go-amqp and
// protonj2 send it), in both roles.

// ErrAuth is what the built-in mechanisms return for credentials they
// refuse.
var ErrAuth = errors.New("engine: authentication failed")

// Plain returns an Authenticator that offers PLAIN (RFC 4616), checked by
// check, and also ANONYMOUS when anonymous is set. EXTERNAL, offered with
// peer certificates, accepts any verified certificate, naming the
// identity after its subject's common name. It is
// Mechanisms(PlainServer(check)) or Mechanisms(PlainServer(check),
// AnonymousServer()).
func Plain(check func(user, password string) bool, anonymous bool) Authenticator {
	if anonymous {
		return Mechanisms(PlainServer(check), AnonymousServer())
	}
	return Mechanisms(PlainServer(check))
}

// oneStep is a server exchange decided by the initial response alone.
type oneStep func(resp []byte) (string, error)

func (f oneStep) Step(resp []byte) (SASLStep, error) {
	id, err := f(resp)
	if err != nil {
		return SASLStep{}, err
	}
	return SASLStep{Done: true, Identity: id}, nil
}

type serverMech struct {
	name  string
	start func(SASLPeer) (SASLExchange, error)
}

func (m serverMech) Name() string                              { return m.name }
func (m serverMech) Start(peer SASLPeer) (SASLExchange, error) { return m.start(peer) }

// AnonymousServer returns the server's ANONYMOUS (RFC 4505): every client
// is let in, as the identity "anonymous".
func AnonymousServer() ServerMechanism {
	return serverMech{"ANONYMOUS", func(SASLPeer) (SASLExchange, error) {
		return oneStep(func([]byte) (string, error) { return "anonymous", nil }), nil
	}}
}

// PlainServer returns the server's PLAIN (RFC 4616): the client's
// initial response is authzid NUL authcid NUL password, and check decides
// the user (authcid) and password; the identity is the user. A nil check
// refuses everyone.
func PlainServer(check func(user, password string) bool) ServerMechanism {
	return serverMech{"PLAIN", func(SASLPeer) (SASLExchange, error) {
		return oneStep(func(resp []byte) (string, error) {
			parts := bytes.SplitN(resp, []byte{0}, 3)
			if len(parts) == 3 && check != nil && check(string(parts[1]), string(parts[2])) {
				return string(parts[1]), nil
			}
			return "", ErrAuth
		}), nil
	}}
}

// ExternalServer returns the server's EXTERNAL (RFC 4422 appendix A):
// the identity comes from the TLS layer. check decides the peer's
// verified certificates and the authorization identity the client asked
// for (its initial response, often empty), returning the identity; nil
// accepts any verified certificate as its subject's common name. Without
// peer certificates EXTERNAL is refused.
func ExternalServer(check func(peer []*x509.Certificate, authzid string) (string, error)) ServerMechanism {
	return serverMech{"EXTERNAL", func(p SASLPeer) (SASLExchange, error) {
		if len(p.PeerCertificates) == 0 {
			return nil, ErrAuth
		}
		return oneStep(func(resp []byte) (string, error) {
			if check == nil {
				return p.PeerCertificates[0].Subject.CommonName, nil
			}
			return check(p.PeerCertificates, string(resp))
		}), nil
	}}
}

// xoauth2Error is the challenge a refused XOAUTH2 client gets before the
// outcome (Google's error response, which go-amqp answers with an empty
// response).
const xoauth2Error = `{"status":"401","schemes":"bearer","scope":""}`

// XOAUTH2Server returns the server's XOAUTH2: the client's initial
// response is "user=" user ^A "auth=Bearer " token ^A ^A, and check, the
// application's, decides the token for the user, returning the identity
// ("" for the user). A refused client is sent the error challenge
// {"status":"401",...}, and the outcome auth after its (empty)
// response. A nil check refuses everyone.
func XOAUTH2Server(check func(user, token string) (identity string, err error)) ServerMechanism {
	return serverMech{"XOAUTH2", func(SASLPeer) (SASLExchange, error) {
		return &xoauth2Server{check: check}, nil
	}}
}

type xoauth2Server struct {
	check   func(user, token string) (string, error)
	refused bool
}

func (x *xoauth2Server) Step(resp []byte) (SASLStep, error) {
	if x.refused {
		return SASLStep{}, ErrAuth // the client's answer to the error challenge
	}
	user, token, ok := parseXOAUTH2(resp)
	if ok && x.check != nil {
		if id, err := x.check(user, token); err == nil {
			if id == "" {
				id = user
			}
			return SASLStep{Done: true, Identity: id}, nil
		}
	}
	x.refused = true
	return SASLStep{Challenge: []byte(xoauth2Error)}, nil
}

// parseXOAUTH2 splits an XOAUTH2 initial response into its user and
// bearer token.
func parseXOAUTH2(resp []byte) (user, token string, ok bool) {
	rest, ok := bytes.CutSuffix(resp, []byte("\x01\x01"))
	if !ok {
		return "", "", false
	}
	for kv := range bytes.SplitSeq(rest, []byte{1}) {
		switch {
		case bytes.HasPrefix(kv, []byte("user=")):
			user = string(kv[5:])
		case bytes.HasPrefix(kv, []byte("auth=")):
			v := kv[5:]
			if len(v) < 7 || !bytes.EqualFold(v[:7], []byte("Bearer ")) {
				return "", "", false
			}
			token = string(v[7:])
		}
	}
	return user, token, user != "" && token != ""
}

// clientMech is a client mechanism of one initial response and no
// challenges.
type clientMech struct {
	name string
	resp []byte
	err  error
}

func (m clientMech) Name() string { return m.name }

func (m clientMech) Start() (ClientExchange, []byte, error) {
	return oneStepClient{m.name}, m.resp, m.err
}

type oneStepClient struct{ name string }

func (c oneStepClient) Challenge([]byte) ([]byte, error) {
	return nil, errors.New("engine: SASL " + c.name + " takes no challenge")
}

func (oneStepClient) Outcome([]byte) error { return nil }

// AnonymousClient returns the client's ANONYMOUS (RFC 4505) with the
// trace information given ("anonymous" when empty).
func AnonymousClient(trace string) ClientMechanism {
	if trace == "" {
		trace = "anonymous"
	}
	return clientMech{name: "ANONYMOUS", resp: []byte(trace)}
}

// PlainClient returns the client's PLAIN (RFC 4616) for user and
// password. It sends the password in the clear: use it over TLS.
func PlainClient(user, password string) ClientMechanism {
	return clientMech{name: "PLAIN", resp: append(append(append([]byte{0}, user...), 0), password...)}
}

// ExternalClient returns the client's EXTERNAL (RFC 4422 appendix A):
// the server takes the identity from the TLS layer; authzid, often
// empty, asks for an authorization identity.
func ExternalClient(authzid string) ClientMechanism {
	return clientMech{name: "EXTERNAL", resp: []byte(authzid)}
}

// unknownClient stands for a Config.Mechanism the engine has no
// mechanism for: it can be chosen only if offered, and then fails.
func unknownClient(name string) ClientMechanism {
	return clientMech{name: name, err: errors.New("no such mechanism in the engine: use Config.SASL")}
}

// XOAUTH2Client returns the client's XOAUTH2 for user and bearer token.
// A server's error challenge is answered with an empty response, and the
// outcome then fails with the challenge's text. The token goes in the
// clear: use it over TLS.
func XOAUTH2Client(user, token string) ClientMechanism {
	m := clientMech{name: "XOAUTH2", resp: []byte("user=" + user + "\x01auth=Bearer " + token + "\x01\x01")}
	if token == "" || user == "" || bytes.IndexByte([]byte(user+token), 1) >= 0 {
		m.err = errors.New("engine: XOAUTH2 needs a user and a token without ^A")
	}
	return xoauth2Client{m}
}

type xoauth2Client struct{ clientMech }

func (m xoauth2Client) Start() (ClientExchange, []byte, error) {
	return &xoauth2ClientEx{}, m.resp, m.err
}

type xoauth2ClientEx struct{ refusal []byte }

func (x *xoauth2ClientEx) Challenge(ch []byte) ([]byte, error) {
	if x.refusal != nil {
		return nil, errors.New("engine: XOAUTH2 second challenge")
	}
	x.refusal = append([]byte{}, ch...)
	return []byte{}, nil
}

func (x *xoauth2ClientEx) Outcome([]byte) error {
	if x.refusal != nil {
		return errors.New("engine: XOAUTH2 refused: " + string(x.refusal))
	}
	return nil
}
