package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the example on its bundled sample.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, nil))
	assert.Equal(t, `sample.amqp, 118 bytes:
described
  ulong 0x70 amqp:header:list
  list[2]
    boolean true
    ubyte 5
described
  ulong 0x73 amqp:properties:list
  list[7]
    string "order-17"
    null
    null
    string "order"
    null
    null
    symbol "text/plain"
described
  ulong 0x74 amqp:application-properties:map
  map[3]
    string "customer"
    string "alice"
    string "secret"
    string "hunter2"
    string "items"
    int 3
described
  ulong 0x77 amqp:amqp-value:*
  string "two apples"

filtered, 127 bytes (x-opt-routed-by annotated, "secret" dropped):
described
  ulong 0x70 amqp:header:list
  list[2]
    boolean true
    ubyte 5
described
  ulong 0x72 amqp:message-annotations:map
  map[1]
    symbol "x-opt-routed-by"
    string "amqpsax"
described
  ulong 0x73 amqp:properties:list
  list[7]
    string "order-17"
    null
    null
    string "order"
    null
    null
    symbol "text/plain"
described
  ulong 0x74 amqp:application-properties:map
  map[2]
    string "customer"
    string "alice"
    string "items"
    int 3
described
  ulong 0x77 amqp:amqp-value:*
  string "two apples"
`, out.String())
}

// TestRunFile runs the example on a file, and on bad input.
func TestRunFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.amqp")
	require.NoError(t, os.WriteFile(good, body, 0o644))
	var out bytes.Buffer
	require.NoError(t, run(&out, []string{good}))
	assert.Equal(t, `good.amqp, 9 bytes:
described
  ulong 0x77 amqp:amqp-value:*
  string "body"

filtered, 41 bytes (x-opt-routed-by annotated, "secret" dropped):
described
  ulong 0x72 amqp:message-annotations:map
  map[1]
    symbol "x-opt-routed-by"
    string "amqpsax"
described
  ulong 0x77 amqp:amqp-value:*
  string "body"
`, out.String()[len(dir)+1:])

	bad := filepath.Join(dir, "bad.amqp")
	require.NoError(t, os.WriteFile(bad, body[:5], 0o644))
	assert.Error(t, run(&out, []string{bad}))
	assert.Error(t, run(&out, []string{filepath.Join(dir, "absent")}))
	assert.Error(t, run(&out, []string{good, good}))
}
