package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// password is the secret of saslPlainClient's PLAIN exchange.
const password = "hunter2-secret"

// saslPlainClient is what a client sends for SASL PLAIN with user
// "user" and password, then the AMQP header and an open: the bytes whose
// secret amqpspy masks.
func saslPlainClient() []byte {
	b := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	s := len(b)
	b = frame.BeginFrame(b, frame.TypeSASL, 0)
	b = frame.EndFrame(frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("PLAIN"),
		InitialResponse: []byte("\x00user\x00" + password), Hostname: []byte("broker")}), s)
	s = len(b)
	b = frame.BeginFrame(b, frame.TypeSASL, 0)
	b = frame.EndFrame(frame.AppendSASLResponse(b, frame.SASLResponse{Response: []byte(password)}), s)
	b = frame.AppendProtocolHeader(b, frame.HeaderAMQP)
	s = len(b)
	b = frame.BeginFrame(b, frame.TypeAMQP, 0)
	return frame.EndFrame(frame.AppendOpen(b, frame.Open{ContainerID: []byte("c")}), s)
}

// masked returns stream with its SASL secrets masked, as -record
// writes it.
func masked(stream []byte) []byte {
	var m masker
	out := m.write(bytes.Clone(stream))
	return append(out, m.flush()...)
}

// secretsOf returns the secrets a stream's SASL frames carry, in order.
func secretsOf(t *testing.T, stream []byte) []string {
	t.Helper()
	var out []string
	r := frame.NewReader(bytes.NewReader(stream))
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if f.IsHeader || f.Type != frame.TypeSASL {
			continue
		}
		if in, err := frame.ParseSASLInit(f.Body); err == nil {
			out = append(out, string(in.InitialResponse))
		} else if re, err := frame.ParseSASLResponse(f.Body); err == nil {
			out = append(out, string(re.Response))
		}
	}
}

// TestMasker: whatever the chunks, the masker's output is the stream
// with each SASL secret replaced by as many '*', as long and still
// parseable, and the bytes after SASL unchanged.
func TestMasker(t *testing.T) {
	in := saslPlainClient()
	masked := []string{strings.Repeat("*", 6+len(password)), strings.Repeat("*", len(password))}
	for _, chunk := range []int{1, 3, 7, 100, len(in)} {
		var m masker
		var out []byte
		src := bytes.Clone(in)
		for b := src; len(b) > 0; b = b[min(chunk, len(b)):] {
			out = append(out, m.write(bytes.Clone(b[:min(chunk, len(b))]))...)
		}
		out = append(out, m.flush()...)
		require.Len(t, out, len(in), "chunks of %d", chunk)
		assert.Equal(t, masked, secretsOf(t, out), "chunks of %d", chunk)
		assert.NotContains(t, string(out), password[:7])
		i := bytes.Index(in, []byte("AMQP\x00"))
		assert.Equal(t, in[i:], out[i:], "after SASL, as it was")
	}
	// A frame cut short at the end is masked whole after its header.
	var m masker
	cut := saslPlainClient()[:30]
	out := append(m.write(bytes.Clone(cut)), m.flush()...)
	require.Len(t, out, 30)
	assert.Equal(t, cut[:16], out[:16])
	assert.Equal(t, strings.Repeat("*", 14), string(out[16:]))
}

// TestSpyMasksSecrets: amqpspy prints (text, JSON, summary) and records
// a SASL PLAIN exchange with the password masked, forwarding it as it is;
// -show-secrets prints and records it.
func TestSpyMasksSecrets(t *testing.T) {
	in := saslPlainClient()
	hexPassword := []byte(nil)
	for _, c := range []byte(password[:7]) {
		hexPassword = append(hexPassword, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
	}
	for _, tc := range []struct {
		name string
		set  func(*spy)
		show bool
	}{
		{"text", func(*spy) {}, false},
		{"json", func(s *spy) { s.json = true }, false},
		{"summary", func(s *spy) { s.summary = true }, false},
		{"show-secrets", func(s *spy) { s.showSecrets = true }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			got := make(chan []byte, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					got <- nil
					return
				}
				defer c.Close()
				b, _ := io.ReadAll(c)
				got <- b
			}()
			var out bytes.Buffer
			dir := t.TempDir()
			s := &spy{target: ln.Addr().String(), out: &lockedWriter{w: &out}, buffer: 1 << 20, record: dir}
			tc.set(s)
			spyAddr, spyDone := startSpy(t, s)
			c, err := net.Dial("tcp", spyAddr)
			require.NoError(t, err)
			_, err = c.Write(in[:20]) // the sasl-init in two reads, most likely
			require.NoError(t, err)
			_, err = c.Write(in[20:])
			require.NoError(t, err)
			c.(*net.TCPConn).CloseWrite()
			io.ReadAll(c)
			c.Close()
			assert.Equal(t, in, <-got, "forwarded as it is")
			spyDone()
			rec, err := os.ReadFile(filepath.Join(dir, "conn-1-client.bin"))
			require.NoError(t, err)
			require.Len(t, rec, len(in))
			text := out.String()
			if tc.show {
				assert.Equal(t, in, rec)
				assert.Contains(t, text, string(hexPassword))
				return
			}
			assert.Equal(t, []string{strings.Repeat("*", 6+len(password)), strings.Repeat("*", len(password))}, secretsOf(t, rec))
			for _, s := range [][]byte{[]byte(password[:7]), hexPassword} {
				assert.NotContains(t, text, string(s))
				assert.NotContains(t, string(rec), string(s))
			}
			if !s.summary {
				assert.Contains(t, text, "2a2a2a2a2a2a2a2a", "the mask printed where the secret was")
			}
		})
	}
}

// TestSpyFaultOneLine: a fault whose text holds the peer's (a source
// described by a symbol of its own, with a newline) is printed on one
// line: the newline escaped.
func TestSpyFaultOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	var out bytes.Buffer
	s := &spy{target: ln.Addr().String(), out: &lockedWriter{w: &out}, buffer: 1 << 20}
	spyAddr, spyDone := startSpy(t, s)
	c, err := net.Dial("tcp", spyAddr)
	require.NoError(t, err)
	body := encode.AppendDescribed(nil)
	body = encode.AppendUlong(body, 0x12) // attach
	st := len(body)
	body = encode.BeginList(body)
	body = encode.AppendString(body, "l")
	body = encode.AppendUint(body, 0)
	body = encode.AppendBool(body, false)
	body = encode.AppendNull(body)
	body = encode.AppendNull(body)
	body = encode.AppendDescribed(body)
	body = encode.AppendSymbol(body, "x:\nforged line")
	body = append(body, 0x45) // list0
	body = encode.EndList(body, st, 6)
	in := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	in = frame.AppendFrame(in, frame.Frame{Body: body})
	_, err = c.Write(in)
	require.NoError(t, err)
	c.(*net.TCPConn).CloseWrite()
	io.ReadAll(c)
	c.Close()
	spyDone()
	assert.Contains(t, out.String(), `descriptor x:\nforged line`)
	for _, line := range strings.Split(out.String(), "\n") {
		assert.False(t, strings.HasPrefix(line, "forged"), "a line of the peer's: %q", line)
	}
}
