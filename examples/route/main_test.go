package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the example on its bundled sample.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, nil))
	assert.Equal(t, `sample.amqp, 543 bytes
stream cursor:   durable=true priority=7 message-id="order-1042" to="orders" subject="order.created" region="eu-west" body=374 bytes (skipped)
package message: durable=true priority=7 message-id="order-1042" to="orders" subject="order.created" region="eu-west" body=374 bytes (skipped)
route to queue orders.eu-west because to=orders, region=eu-west; express lane because priority=7; stored before settling, durable=true
forwarded, 573 bytes: delivery-count 0 -> 1, message annotation x-opt-routed-by = "amqpsax" added
bare message (494 bytes) byte-identical: true
`, out.String())
}

// TestRunFile runs the example on a file, and with too many arguments.
func TestRunFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.amqp")
	require.NoError(t, os.WriteFile(path, sample, 0o644))
	var out bytes.Buffer
	require.NoError(t, run(&out, []string{path}))
	assert.Contains(t, out.String(), path+", 543 bytes\n")
	assert.Error(t, run(&out, []string{"a", "b"}))
}

// TestProtonCorpus: on every message Qpid Proton wrote, the cursor and
// package message read the same fields, and forwarding keeps the bare
// message.
func TestProtonCorpus(t *testing.T) {
	for _, e := range corpus.Load(t, "messages.jsonl") {
		a, err := withCursor(e.Data)
		require.NoError(t, err, e.Name)
		b, err := withMessage(e.Data)
		require.NoError(t, err, e.Name)
		assert.Equal(t, a, b, e.Name)
		f, err := forward(e.Data)
		require.NoError(t, err, e.Name)
		assert.True(t, f.identical, e.Name)
		assert.Equal(t, min(uint64(f.count)+1, 1<<32-1), uint64(f.count2), e.Name)
	}
	// Two of them, field by field.
	a, err := withCursor(corpusMessage(t, "properties-all"))
	require.NoError(t, err)
	assert.Equal(t, fields{Priority: 4, MessageID: "123456789", To: "queue://a", Subject: "greeting", BodyBytes: 20}, a)
	a, err = withCursor(corpusMessage(t, "header-all"))
	require.NoError(t, err)
	assert.Equal(t, fields{Durable: true, Priority: 9, BodyBytes: 7}, a)
	assert.Equal(t, "route to queue dead-letter because the message has no address (to)", decide(a))
}

// TestSymbolicDescriptors: the sample with every section descriptor
// written as its symbolic name, as some peers send it, reads the same.
func TestSymbolicDescriptors(t *testing.T) {
	s, err := message.Scan(sample)
	require.NoError(t, err)
	var sym []byte
	for _, sec := range []struct {
		name string
		raw  []byte
	}{
		{"amqp:header:list", s.Header},
		{"amqp:message-annotations:map", s.MessageAnnotations},
		{"amqp:properties:list", s.Properties},
		{"amqp:application-properties:map", s.ApplicationProperties},
		{"amqp:data:binary", s.Body},
	} {
		// Each section here has a smallulong descriptor: 00 53 xx.
		require.Equal(t, []byte{0x00, 0x53}, sec.raw[:2], sec.name)
		sym = append(sym, 0x00, 0xa3, byte(len(sec.name)))
		sym = append(sym, sec.name...)
		sym = append(sym, sec.raw[3:]...)
	}
	want, err := withCursor(sample)
	require.NoError(t, err)
	want.BodyBytes += 2 + len("amqp:data:binary") - 2 // descriptor a3 10 "amqp:data:binary" instead of 53 75
	got, err := withCursor(sym)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got, err = withMessage(sym)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func corpusMessage(t *testing.T, name string) []byte {
	t.Helper()
	for _, e := range corpus.Load(t, "messages.jsonl") {
		if e.Name == name {
			return e.Data
		}
	}
	t.Fatalf("no corpus message %s", name)
	return nil
}
