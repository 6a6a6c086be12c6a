package engine

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
)

// SCRAM-SHA-256 (RFC 5802, RFC 7677), without channel binding: the
// client proves it knows the password without sending it, the server
// proves it knows the salted credentials (its signature in the outcome's
// additional data), and the server keeps only salted keys, never the
// password.
//
//	client-first  n,,n=user,r=cnonce
//	server-first  r=cnonce+snonce,s=salt,i=iterations     (challenge)
//	client-final  c=biws,r=cnonce+snonce,p=proof          (response)
//	server-final  v=signature                             (outcome data)
//
// Names and passwords are used as UTF-8 bytes, without SASLprep's
// normalisation (RFC 4013): ASCII ones are unaffected.

const (
	// SCRAMIterations is the iteration count NewSCRAMCredentials uses
	// by default, RFC 7677's minimum.
	SCRAMIterations = 4096
	// scramMaxIterations bounds the iteration count a client accepts
	// from a server (each is an HMAC: a hostile server must not make
	// the client spin).
	scramMaxIterations = 1 << 20
	scramNonceBytes    = 18
)

var errSCRAM = errors.New("engine: SCRAM-SHA-256 message malformed")

// SCRAMCredentials are what a SCRAM-SHA-256 server stores for a user
// (RFC 5802 §3): the salt and iteration count the client derives its
// key with, and the keys derived from the salted password. The password
// cannot be recovered from them.
type SCRAMCredentials struct {
	Salt       []byte
	Iterations int
	StoredKey  []byte // H(HMAC(SaltedPassword, "Client Key"))
	ServerKey  []byte // HMAC(SaltedPassword, "Server Key")
}

// NewSCRAMCredentials derives the stored credentials of password with
// salt (nil: 16 random bytes) and iterations (0: SCRAMIterations).
func NewSCRAMCredentials(password string, salt []byte, iterations int) (SCRAMCredentials, error) {
	if iterations <= 0 {
		iterations = SCRAMIterations
	}
	if salt == nil {
		salt = make([]byte, 16)
		rand.Read(salt)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return SCRAMCredentials{}, err
	}
	ck := hmacSHA256(salted, "Client Key")
	sk := sha256.Sum256(ck)
	return SCRAMCredentials{Salt: bytes.Clone(salt), Iterations: iterations, StoredKey: sk[:],
		ServerKey: hmacSHA256(salted, "Server Key")}, nil
}

func hmacSHA256(key []byte, msg string) []byte {
	if scramHashHook != nil {
		scramHashHook()
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// scramHashHook, when set (by tests), is called at each HMAC and hash
// the server computes, so that a test can count the work an exchange
// does.
var scramHashHook func()

// scramSum is sha256.Sum256, counted by scramHashHook.
func scramSum(b []byte) [sha256.Size]byte {
	if scramHashHook != nil {
		scramHashHook()
	}
	return sha256.Sum256(b)
}

// scramNonce returns a fresh nonce: printable, without ','.
func scramNonce() string {
	b := make([]byte, scramNonceBytes)
	rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}

// SCRAMSHA256Server returns the server's SCRAM-SHA-256. lookup returns a
// user's stored credentials (NewSCRAMCredentials), false for an unknown
// user, who is refused at the proof, after a challenge like anyone's, so
// that the exchange does not tell who has an account: a salt made up for
// the name (the same each time), the iteration count most of the known
// users this mechanism has looked up have (SCRAMIterations until it has
// looked one up), and a proof checked against keys made up for the name
// with the same HMACs and hash as a known user's. Channel binding is not
// supported: a client that asks for it ("p=") is refused.
func SCRAMSHA256Server(lookup func(user string) (SCRAMCredentials, bool)) ServerMechanism {
	iters := &scramIterCounts{}
	return serverMech{"SCRAM-SHA-256", func(SASLPeer) (SASLExchange, error) {
		return &scramServer{lookup: lookup, nonce: scramNonce, iters: iters}, nil
	}}
}

// scramIterCounts counts the iteration counts of the known users a
// server mechanism has looked up, so that an unknown user's challenge
// can carry the most common one. It keeps the first few distinct counts
// it sees (an account store has one or two), so it stays small.
type scramIterCounts struct {
	mu   sync.Mutex
	seen [8]struct{ iter, n int }
	used int
}

// saw counts a known user's iteration count.
func (c *scramIterCounts) saw(iter int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.seen[:c.used] {
		if c.seen[i].iter == iter {
			c.seen[i].n++
			return
		}
	}
	if c.used < len(c.seen) {
		c.seen[c.used].iter, c.seen[c.used].n = iter, 1
		c.used++
	}
}

// common returns the iteration count seen most (the first seen of those
// tied), or SCRAMIterations before any.
func (c *scramIterCounts) common() int {
	if c == nil {
		return SCRAMIterations
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	best, n := SCRAMIterations, 0
	for _, s := range c.seen[:c.used] {
		if s.n > n {
			best, n = s.iter, s.n
		}
	}
	return best
}

// scramDecoy returns the credentials an unknown user is challenged and
// checked with: a salt and keys made from the name with scramDecoyKey,
// the same for the name in this process, and iterations. It is computed
// for known users too, so that both do the same work.
func scramDecoy(user string, iterations int) SCRAMCredentials {
	k := hmacSHA256(scramDecoyKey[:], user)
	return SCRAMCredentials{Salt: k[:16], Iterations: iterations,
		StoredKey: hmacSHA256(k, "Stored Key"), ServerKey: hmacSHA256(k, "Server Key")}
}

type scramServer struct {
	lookup func(string) (SCRAMCredentials, bool)
	nonce  func() string
	iters  *scramIterCounts // shared by the mechanism's exchanges; nil: none

	step        int
	gs2         string // the client's gs2 header
	user        string
	nonceAll    string // the client's nonce and the server's
	cred        SCRAMCredentials
	firstBare   string // client-first-message-bare
	serverFirst string
	unknown     bool // no such user: refused at the proof
}

// scramDecoyKey makes the salts of unknown users, for this process.
var scramDecoyKey = func() (k [32]byte) {
	rand.Read(k[:])
	return k
}()

func (s *scramServer) Step(resp []byte) (SASLStep, error) {
	s.step++
	switch s.step {
	case 1:
		return s.clientFirst(string(resp))
	case 2:
		return s.clientFinal(string(resp))
	}
	return SASLStep{}, errSCRAM
}

// clientFirst takes gs2-header client-first-message-bare (RFC 5802 §7).
func (s *scramServer) clientFirst(m string) (SASLStep, error) {
	// gs2-cbind-flag "," [authzid] ","
	if len(m) < 3 || (m[0] != 'n' && m[0] != 'y') || m[1] != ',' {
		return SASLStep{}, errSCRAM // "p=...": channel binding, not supported
	}
	i := strings.IndexByte(m[2:], ',')
	if i < 0 {
		return SASLStep{}, errSCRAM
	}
	if a := m[2 : 2+i]; a != "" && !strings.HasPrefix(a, "a=") {
		return SASLStep{}, errSCRAM
	}
	s.gs2, s.firstBare = m[:3+i], m[3+i:]
	attrs := strings.Split(s.firstBare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") || len(attrs[1]) < 3 {
		return SASLStep{}, errSCRAM // m= (mandatory extensions) lands here too
	}
	user, ok := scramUnescape(attrs[0][2:])
	if !ok {
		return SASLStep{}, errSCRAM
	}
	var cred SCRAMCredentials
	ok = false
	if s.lookup != nil {
		cred, ok = s.lookup(user)
	}
	// An unknown user gets a challenge like a known one's, with a salt
	// of its own that does not change and the common iteration count,
	// and is refused at the proof, which is checked as a known user's
	// is: the exchange does not tell who has an account. The decoy is
	// made for known users too, for the same work.
	decoy := scramDecoy(user, s.iters.common())
	if !ok || cred.Iterations <= 0 || len(cred.StoredKey) != sha256.Size || len(cred.ServerKey) != sha256.Size {
		cred = decoy
		s.unknown = true
	} else {
		s.iters.saw(cred.Iterations)
	}
	s.user, s.cred = user, cred
	s.nonceAll = attrs[1][2:] + s.nonce()
	s.serverFirst = "r=" + s.nonceAll + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) +
		",i=" + strconv.Itoa(cred.Iterations)
	return SASLStep{Challenge: []byte(s.serverFirst)}, nil
}

// clientFinal takes c=channel-binding,r=nonce[,...],p=proof and checks
// the proof (RFC 5802 §3).
func (s *scramServer) clientFinal(m string) (SASLStep, error) {
	i := strings.LastIndex(m, ",p=")
	if i < 0 {
		return SASLStep{}, errSCRAM
	}
	withoutProof := m[:i]
	proof, err := base64.StdEncoding.DecodeString(m[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return SASLStep{}, errSCRAM
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || attrs[0] != "c="+base64.StdEncoding.EncodeToString([]byte(s.gs2)) || attrs[1] != "r="+s.nonceAll {
		return SASLStep{}, errSCRAM
	}
	auth := s.firstBare + "," + s.serverFirst + "," + withoutProof
	sig := hmacSHA256(s.cred.StoredKey, auth)
	key := make([]byte, sha256.Size)
	subtle.XORBytes(key, proof, sig)
	stored := scramSum(key)
	// An unknown user's proof is checked against the decoy keys, the
	// same work, and refused whatever the comparison says.
	if subtle.ConstantTimeCompare(stored[:], s.cred.StoredKey) != 1 || s.unknown {
		return SASLStep{}, ErrAuth
	}
	v := "v=" + base64.StdEncoding.EncodeToString(hmacSHA256(s.cred.ServerKey, auth))
	return SASLStep{Done: true, Identity: s.user, Data: []byte(v)}, nil
}

// scramUnescape undoes saslname's escapes (=2C for ',', =3D for '=').
func scramUnescape(n string) (string, bool) {
	if !strings.Contains(n, "=") {
		return n, n != ""
	}
	var b strings.Builder
	for i := 0; i < len(n); i++ {
		if n[i] != '=' {
			b.WriteByte(n[i])
			continue
		}
		switch {
		case strings.HasPrefix(n[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(n[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), b.Len() > 0
}

// SCRAMSHA256Client returns the client's SCRAM-SHA-256 for user and
// password. It checks the server's signature (in the outcome's
// additional data, or in a last challenge, as some servers send it), so
// the outcome ok of a server that does not know the credentials ends the
// connection. It accepts iteration counts from 4096 (RFC 7677's minimum)
// to 2^20.
func SCRAMSHA256Client(user, password string) ClientMechanism {
	return scramClientMech{user: user, password: password, nonce: scramNonce}
}

type scramClientMech struct {
	user, password string
	nonce          func() string
}

func (scramClientMech) Name() string { return "SCRAM-SHA-256" }

func (m scramClientMech) Start() (ClientExchange, []byte, error) {
	if m.user == "" {
		return nil, nil, errors.New("engine: SCRAM-SHA-256 needs a user")
	}
	name := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(m.user)
	x := &scramClient{password: m.password, nonce: m.nonce()}
	x.firstBare = "n=" + name + ",r=" + x.nonce
	return x, []byte("n,," + x.firstBare), nil
}

type scramClient struct {
	password  string
	nonce     string
	firstBare string
	serverSig []byte // expected in server-final
	verified  bool
}

func (x *scramClient) Challenge(ch []byte) ([]byte, error) {
	if x.serverSig != nil {
		// server-final sent as a challenge.
		if err := x.verify(ch); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	m := string(ch)
	var nonce, salt64, iter string
	for a := range strings.SplitSeq(m, ",") {
		switch {
		case strings.HasPrefix(a, "r="):
			nonce = a[2:]
		case strings.HasPrefix(a, "s="):
			salt64 = a[2:]
		case strings.HasPrefix(a, "i="):
			iter = a[2:]
		case strings.HasPrefix(a, "e="):
			return nil, errors.New("engine: SCRAM-SHA-256 server error " + a[2:])
		}
	}
	if !strings.HasPrefix(m, "r=") || len(nonce) <= len(x.nonce) || !strings.HasPrefix(nonce, x.nonce) {
		return nil, errors.New("engine: SCRAM-SHA-256 server nonce does not extend the client's")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil || len(salt) == 0 {
		return nil, errSCRAM
	}
	n, err := strconv.Atoi(iter)
	if err != nil || n < SCRAMIterations || n > scramMaxIterations {
		return nil, errors.New("engine: SCRAM-SHA-256 iteration count " + strconv.Quote(iter) + " outside 4096..2^20")
	}
	salted, err := pbkdf2.Key(sha256.New, x.password, salt, n, sha256.Size)
	if err != nil {
		return nil, err
	}
	ck := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(ck)
	withoutProof := "c=biws,r=" + nonce
	auth := x.firstBare + "," + m + "," + withoutProof
	proof := hmacSHA256(stored[:], auth)
	subtle.XORBytes(proof, proof, ck)
	x.serverSig = hmacSHA256(hmacSHA256(salted, "Server Key"), auth)
	return []byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)), nil
}

// verify checks server-final-message: v=signature.
func (x *scramClient) verify(m []byte) error {
	v, ok := bytes.CutPrefix(m, []byte("v="))
	if !ok {
		if e, ok := bytes.CutPrefix(m, []byte("e=")); ok {
			return errors.New("engine: SCRAM-SHA-256 server error " + string(e))
		}
		return errors.New("engine: SCRAM-SHA-256 server sent no signature")
	}
	sig, err := base64.StdEncoding.DecodeString(string(v))
	if err != nil || !hmac.Equal(sig, x.serverSig) {
		return errors.New("engine: SCRAM-SHA-256 server signature wrong: the server does not know the credentials")
	}
	x.verified = true
	return nil
}

func (x *scramClient) Outcome(data []byte) error {
	if x.serverSig == nil {
		return errors.New("engine: SCRAM-SHA-256 outcome before the exchange ended")
	}
	if x.verified && len(data) == 0 {
		return nil
	}
	return x.verify(data)
}
