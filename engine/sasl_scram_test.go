package engine

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestSCRAMUnknownUserLikeKnown: where the accounts were made with
// another iteration count than SCRAMIterations, an unknown user's
// challenge says the accounts' count, not the default; and an unknown
// user's exchange computes as many HMACs and hashes as a known user's
// with a wrong password (counted through scramHashHook, not timed).
func TestSCRAMUnknownUserLikeKnown(t *testing.T) {
	cred, err := NewSCRAMCredentials("pencil", nil, 5000)
	if err != nil {
		t.Fatal(err)
	}
	mech := SCRAMSHA256Server(func(u string) (SCRAMCredentials, bool) { return cred, u == "user" })
	// run does an exchange for user with a proof of zeros and returns
	// the server's challenge and the HMACs and hashes the server
	// computed.
	run := func(user string) (challenge string, hashes int) {
		x, err := mech.Start(SASLPeer{})
		if err != nil {
			t.Fatal(err)
		}
		scramHashHook = func() { hashes++ }
		defer func() { scramHashHook = nil }()
		st, err := x.Step([]byte("n,,n=" + user + ",r=" + rfcClientNonce))
		if err != nil || st.Done {
			t.Fatalf("%s: first %+v %v", user, st, err)
		}
		nonce := strings.SplitN(string(st.Challenge), ",", 2)[0] // r=client+server
		final := "c=biws," + nonce + ",p=" + base64.StdEncoding.EncodeToString(make([]byte, 32))
		if st, err := x.Step([]byte(final)); err == nil || st.Done {
			t.Fatalf("%s: a proof of zeros was accepted", user)
		}
		return string(st.Challenge), hashes
	}
	known, knownWork := run("user")
	unknown, unknownWork := run("nobody")
	if !strings.HasSuffix(known, ",i=5000") || !strings.HasSuffix(unknown, ",i=5000") {
		t.Errorf("iteration counts: known %q, unknown %q", known, unknown)
	}
	if knownWork != unknownWork || knownWork == 0 {
		t.Errorf("HMACs and hashes: known user %d, unknown %d", knownWork, unknownWork)
	}
}
