package main

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
)

// TestMasksSecrets: a SASL PLAIN password is masked in every output of
// amqpdump — frames as text, JSON and summary, and a sasl-init read as a
// value — unless -show-secrets.
func TestMasksSecrets(t *testing.T) {
	const password = "hunter2-secret"
	init := frame.AppendSASLInit(nil, frame.SASLInit{Mechanism: []byte("PLAIN"), InitialResponse: []byte("\x00user\x00" + password)})
	stream := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	s := len(stream)
	stream = frame.BeginFrame(stream, frame.TypeSASL, 0)
	stream = frame.EndFrame(append(stream, init...), s)
	s = len(stream)
	stream = frame.BeginFrame(stream, frame.TypeSASL, 0)
	stream = frame.EndFrame(frame.AppendSASLResponse(stream, frame.SASLResponse{Response: []byte(password)}), s)
	secret := []string{password[:7], hex.EncodeToString([]byte(password[:7]))}
	for _, tc := range []struct {
		args []string
		in   []byte
	}{
		{[]string{"-frames"}, stream},
		{[]string{"-frames", "-json"}, stream},
		{[]string{"-frames", "-json", "-plain"}, stream},
		{[]string{"-frames", "-summary"}, stream},
		{nil, init},
		{[]string{"-json"}, init},
	} {
		name := strings.Join(tc.args, " ")
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, run(tc.args, bytes.NewReader(tc.in), &out, &errOut), name+": "+errOut.String())
		for _, s := range secret {
			assert.NotContains(t, out.String(), s, name)
		}
		if !strings.Contains(name, "summary") {
			assert.Contains(t, out.String(), "2a2a2a2a", name+": the mask where the secret was")
		}
		out.Reset()
		assert.Equal(t, 0, run(append([]string{"-show-secrets"}, tc.args...), bytes.NewReader(tc.in), &out, &errOut), name)
		if !strings.Contains(name, "summary") {
			assert.Contains(t, out.String(), secret[1], name+" -show-secrets")
		}
	}
}
