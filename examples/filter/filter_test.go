package main

import (
	"encoding/hex"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Builders of encoded values, for the hand-made cases.

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func described(desc, value []byte) []byte { return cat([]byte{0}, desc, value) }
func ulong(v uint64) []byte               { return encode.AppendUlong(nil, v) }
func sym(s string) []byte                 { return encode.AppendSymbol(nil, s) }
func str(s string) []byte                 { return encode.AppendString(nil, s) }
func null() []byte                        { return encode.AppendNull(nil) }

func listOf(vs ...[]byte) []byte {
	return encode.EndList(cat(encode.BeginList(nil), cat(vs...)), 0, len(vs))
}

func mapOf(kv ...[]byte) []byte {
	return encode.EndMap(cat(encode.BeginMap(nil), cat(kv...)), 0, len(kv)/2)
}

// section returns a section with a ulong descriptor.
func section(d amqpsax.Descriptor, value []byte) []byte { return described(ulong(uint64(d)), value) }

// symSection returns a section with a symbol descriptor.
func symSection(d amqpsax.Descriptor, value []byte) []byte { return described(sym(d.Name()), value) }

var (
	header     = section(amqpsax.DescriptorHeader, listOf(encode.AppendBool(nil, true)))
	properties = section(amqpsax.DescriptorProperties, listOf(str("id-1")))
	body       = section(amqpsax.DescriptorAMQPValue, str("body"))
	routedBy   = [][]byte{sym("x-opt-routed-by"), str("amqpsax")}
	annotation = section(amqpsax.DescriptorMessageAnnotations, mapOf(routedBy...))
)

// traceOf returns the trace of the values in b.
func traceOf(t *testing.T, b []byte) string {
	t.Helper()
	var rec trace.Recorder
	var d dispatch.Decoder
	require.NoError(t, d.DecodeAll(b, &rec))
	return rec.String()
}

// run filters msg, adding the annotation and dropping the property drop.
func runFilter(t *testing.T, msg []byte, drop string) []byte {
	t.Helper()
	var w encode.Writer
	f := Filter{W: &w, AnnotationKey: "x-opt-routed-by", AnnotationValue: "amqpsax", DropProperty: drop}
	var d dispatch.Decoder
	require.NoError(t, d.DecodeAll(msg, &f))
	require.NoError(t, f.Finish())
	assert.Zero(t, w.Depth())
	return w.Bytes()
}

// TestFilterCases: hand-made messages and the message each must become.
func TestFilterCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out []byte
	}{
		{"no annotations: inserted before properties",
			cat(header, properties, body),
			cat(header, annotation, properties, body)},
		{"inserted after delivery annotations, before the body",
			cat(section(amqpsax.DescriptorDeliveryAnnotations, mapOf(sym("x-opt-d"), str("d"))), body),
			cat(section(amqpsax.DescriptorDeliveryAnnotations, mapOf(sym("x-opt-d"), str("d"))), annotation, body)},
		{"inserted before the footer",
			cat(header, section(amqpsax.DescriptorFooter, mapOf())),
			cat(header, annotation, section(amqpsax.DescriptorFooter, mapOf()))},
		{"no section after: appended by Finish",
			header,
			cat(header, annotation)},
		{"empty input: the annotations alone",
			nil,
			annotation},
		{"symbol descriptors",
			cat(symSection(amqpsax.DescriptorHeader, listOf()), symSection(amqpsax.DescriptorApplicationProperties,
				mapOf(str("secret"), str("s"), str("k"), str("v")))),
			cat(symSection(amqpsax.DescriptorHeader, listOf()), annotation, symSection(amqpsax.DescriptorApplicationProperties,
				mapOf(str("k"), str("v"))))},
		{"symbol message-annotations: extended",
			cat(header, symSection(amqpsax.DescriptorMessageAnnotations, mapOf(sym("a"), str("b"))), body),
			cat(header, symSection(amqpsax.DescriptorMessageAnnotations, mapOf(sym("a"), str("b"), routedBy[0], routedBy[1])), body)},
		{"existing annotation of the key: replaced",
			cat(section(amqpsax.DescriptorMessageAnnotations, mapOf(sym("x-opt-routed-by"), listOf(str("old")), sym("a"), null())), body),
			cat(section(amqpsax.DescriptorMessageAnnotations, mapOf(sym("a"), null(), routedBy[0], routedBy[1])), body)},
		{"a string key of the same text is another key",
			cat(section(amqpsax.DescriptorMessageAnnotations, mapOf(str("x-opt-routed-by"), str("s"))), body),
			cat(section(amqpsax.DescriptorMessageAnnotations, mapOf(str("x-opt-routed-by"), str("s"), routedBy[0], routedBy[1])), body)},
		{"null message annotations: a map",
			cat(section(amqpsax.DescriptorMessageAnnotations, null()), body),
			cat(annotation, body)},
		{"compound and described values of the property dropped whole",
			cat(section(amqpsax.DescriptorApplicationProperties, mapOf(
				str("secret"), listOf(str("a"), mapOf(str("secret"), null())),
				str("keep"), encode.AppendInt(nil, 1),
				str("secret"), described(sym("x"), str("y"))))),
			cat(annotation, section(amqpsax.DescriptorApplicationProperties, mapOf(str("keep"), encode.AppendInt(nil, 1))))},
		{"deeper keys and other sections are left alone",
			cat(section(amqpsax.DescriptorApplicationProperties, mapOf(str("k"), mapOf(str("secret"), str("s")))),
				section(amqpsax.DescriptorAMQPValue, mapOf(str("secret"), str("s"), sym("x-opt-routed-by"), null()))),
			cat(annotation, section(amqpsax.DescriptorApplicationProperties, mapOf(str("k"), mapOf(str("secret"), str("s")))),
				section(amqpsax.DescriptorAMQPValue, mapOf(str("secret"), str("s"), sym("x-opt-routed-by"), null())))},
		{"a symbol key \"secret\" is not the property",
			section(amqpsax.DescriptorApplicationProperties, mapOf(sym("secret"), str("s"))),
			cat(annotation, section(amqpsax.DescriptorApplicationProperties, mapOf(sym("secret"), str("s"))))},
		{"unknown descriptors pass",
			cat(described(ulong(0x468c_0000_0001), listOf()), described(sym("com.example:x"), null()), body),
			cat(described(ulong(0x468c_0000_0001), listOf()), described(sym("com.example:x"), null()), annotation, body)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runFilter(t, tc.in, "secret")
			assert.Equal(t, traceOf(t, tc.out), traceOf(t, got), "got %s", hex.EncodeToString(got))
		})
	}
}

// sectionOf is one section of a message as the tests compare it.
type sectionOf struct {
	d       amqpsax.Descriptor
	trace   string     // the whole section's
	entries [][]string // a map section's entries: the traces of each key and value
}

// sections splits a message into its sections.
func sections(t *testing.T, msg []byte) []sectionOf {
	t.Helper()
	var out []sectionOf
	var c stream.Cursor
	c.Reset(msg)
	for c.Next() {
		require.Equal(t, amqpsax.KindDescribed, c.Kind())
		s := sectionOf{trace: traceOf(t, c.Raw())}
		d, _, ok := c.Descriptor()
		require.True(t, ok)
		s.d = d
		require.True(t, c.Enter())
		require.True(t, c.Next()) // the descriptor
		require.True(t, c.Next()) // the value
		if c.Kind() == amqpsax.KindMap {
			require.True(t, c.Enter())
			for c.Next() {
				key := traceOf(t, c.Raw())
				require.True(t, c.Next())
				s.entries = append(s.entries, []string{key, traceOf(t, c.Raw())})
			}
			require.True(t, c.Exit())
		}
		require.True(t, c.Exit())
		out = append(out, s)
	}
	require.NoError(t, c.Err())
	return out
}

// without returns entries without those whose key's trace is key.
func without(entries [][]string, key string) [][]string {
	var out [][]string
	for _, e := range entries {
		if e[0] != key {
			out = append(out, e)
		}
	}
	return out
}

// TestFilterCorpus: for every message of the Proton corpus, and for every
// application property of each, dropping that property, the filtered
// message decodes; its sections are the input's, in the same order, with a
// message-annotations section where the spec puts it; the annotations are
// the input's, without any of the added key, plus the added one; the
// application properties are the input's without the dropped one; and
// every other section is unchanged.
func TestFilterCorpus(t *testing.T) {
	ourKey := "symbol:" + hex.EncodeToString([]byte("x-opt-routed-by"))
	ourEntry := []string{ourKey, "string:" + hex.EncodeToString([]byte("amqpsax"))}
	runs := 0
	for _, e := range corpus.Load(t, "messages.jsonl") {
		in := sections(t, e.Data)
		drops := []string{"secret"}
		for _, s := range in {
			if s.d == amqpsax.DescriptorApplicationProperties {
				for _, kv := range s.entries {
					key, err := hex.DecodeString(kv[0][len("string:"):])
					require.NoError(t, err)
					drops = append(drops, string(key))
				}
			}
		}
		for _, drop := range drops {
			runs++
			out := sections(t, runFilter(t, e.Data, drop))
			var want []sectionOf
			annotated := false
			for _, s := range in {
				if !annotated && s.d > amqpsax.DescriptorMessageAnnotations {
					want = append(want, sectionOf{d: amqpsax.DescriptorMessageAnnotations, entries: [][]string{ourEntry}})
					annotated = true
				}
				switch s.d {
				case amqpsax.DescriptorMessageAnnotations:
					s.entries = append(without(s.entries, ourKey), ourEntry)
					s.trace = ""
					annotated = true
				case amqpsax.DescriptorApplicationProperties:
					s.entries = without(s.entries, "string:"+hex.EncodeToString([]byte(drop)))
					s.trace = ""
				}
				want = append(want, s)
			}
			if !annotated {
				want = append(want, sectionOf{d: amqpsax.DescriptorMessageAnnotations, entries: [][]string{ourEntry}})
			}
			for i := range out {
				if out[i].d == amqpsax.DescriptorMessageAnnotations || out[i].d == amqpsax.DescriptorApplicationProperties {
					out[i].trace = ""
				}
			}
			assert.Equal(t, want, out, "%s, dropping %q", e.Name, drop)
		}
	}
	assert.Greater(t, runs, 40)
}

// TestFilterErrors: bad input stops the filter with the decoder's error.
func TestFilterErrors(t *testing.T) {
	var w encode.Writer
	f := Filter{W: &w, AnnotationKey: "k", AnnotationValue: "v", DropProperty: "secret"}
	var d dispatch.Decoder
	err := d.DecodeAll(cat(header, []byte{0x00, 0x53, 0x74, 0xc1, 0x05, 0x02, 0xa1, 0x01}), &f)
	var ae *amqpsax.Error
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, len(header)+3, ae.Offset)
}
