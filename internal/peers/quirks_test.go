package peers

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The counts doc/peers.md quotes come from this file: run
//
//	go test ./internal/peers -run TestQuirks -v
//
// Each quirk is counted per encoder over the whole corpus, and what the
// library does about it is asserted, so the page and the library cannot
// drift apart silently.

// tally counts facts per encoder.
type tally map[string]map[string]int

func (t tally) add(enc, fact string) {
	if t[enc] == nil {
		t[enc] = map[string]int{}
	}
	t[enc][fact]++
}

func (t tally) log(tb testing.TB) {
	var encs []string
	for e := range t {
		encs = append(encs, e)
	}
	sort.Strings(encs)
	for _, e := range encs {
		var facts []string
		for f, n := range t[e] {
			facts = append(facts, fmt.Sprintf("%s=%d", f, n))
		}
		sort.Strings(facts)
		tb.Logf("%s: %s", e, strings.Join(facts, " "))
	}
}

// widths walks every value under the cursor's level and counts the
// compound encodings and the descriptor forms it meets.
func widths(c *stream.Cursor, enc string, tl tally) {
	for c.Next() {
		switch c.Kind() {
		case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray:
			tl.add(enc, fmt.Sprintf("code-%02x", byte(c.Code())))
			if c.Kind() == amqpsax.KindList && c.Code() == amqpsax.CodeList32 && len(c.Raw()) < 256 {
				tl.add(enc, "list32-that-fits-list8")
			}
			if c.Kind() == amqpsax.KindMap && c.Code() == amqpsax.CodeMap32 && len(c.Raw()) < 256 {
				tl.add(enc, "map32-that-fits-map8")
			}
		case amqpsax.KindDescribed:
			if _, sym, ok := c.Descriptor(); ok && sym != nil {
				tl.add(enc, "symbolic-descriptor")
			} else if ok {
				tl.add(enc, "ulong-descriptor")
			}
		}
		if c.Kind() >= amqpsax.KindList {
			if c.Enter() {
				widths(c, enc, tl)
				c.Exit()
			}
		}
	}
}

// keyKinds counts the kinds of the keys of an annotations map section
// (delivery-/message-annotations, footer: symbol or ulong per the spec).
func keyKinds(t *testing.T, sec []byte, what, enc string, tl tally) {
	var c stream.Cursor
	c.Reset(sec)
	require.True(t, c.Next() && c.Enter() && c.Next() && c.Next(), what)
	require.True(t, c.Enter(), what)
	for i := 0; c.Next(); i++ {
		if i%2 == 0 {
			tl.add(enc, what+"-key-"+c.Kind().String())
		}
	}
	require.NoError(t, c.Err())
}

// fields counts the fields a list section or performative carries: list
// count and trailing nulls.
func trailingNulls(t *testing.T, v []byte) (count, nulls int) {
	var c stream.Cursor
	c.Reset(v)
	require.True(t, c.Next() && c.Enter() && c.Next() && c.Next())
	count = c.Count()
	if c.Kind() != amqpsax.KindList || !c.Enter() {
		return count, 0
	}
	for c.Next() {
		if c.Kind() == amqpsax.KindNull {
			nulls++
		} else {
			nulls = 0
		}
	}
	return count, nulls
}

// bodySections returns the body sections of a scanned message, each
// whole.
func bodySections(t *testing.T, body []byte) [][]byte {
	var out [][]byte
	var c stream.Cursor
	c.Reset(body)
	for c.Next() {
		out = append(out, c.Raw())
	}
	require.NoError(t, c.Err())
	return out
}

func TestQuirks(t *testing.T) {
	tl := tally{}
	streams := Load(t)
	sent := map[string][]message.Sections{} // conn → what the client sent (RabbitMQ connections)
	for _, s := range streams {
		enc := s.Encoder()
		for _, f := range s.Frames {
			if f.Kind != "frame" {
				continue
			}
			if f.Doff != 2 {
				tl.add(enc, "doff-not-2")
			}
			b := body(&s, f)
			if len(b) == 0 {
				tl.add(enc, "heartbeat")
				continue
			}
			var c stream.Cursor
			c.Reset(b)
			require.True(t, c.Next())
			v := c.Raw()
			c.Reset(v) // the performative only; its payload is counted with the messages
			widths(&c, enc, tl)
			count, nulls := trailingNulls(t, v)
			if nulls > 0 {
				tl.add(enc, "performative-with-trailing-nulls")
			}
			if *f.Performative == "transfer" && count == 11 {
				tl.add(enc, "transfer-with-all-11-fields")
			}
			if f.Size == 512 {
				tl.add(enc, "frame-of-512-bytes")
			}
		}
		for _, m := range s.Messages {
			var c stream.Cursor
			c.Reset(m.Data)
			widths(&c, enc+"/msg", tl)
			sc, err := message.Scan(m.Data)
			if err != nil {
				tl.add(enc, "message-scan-refuses")
				continue
			}
			if s.Dir == "client" && s.Server == "rabbitmq" {
				sent[s.Conn] = append(sent[s.Conn], sc)
			}
			for _, sec := range []struct {
				name string
				b    []byte
			}{{"delivery-annotations", sc.DeliveryAnnotations}, {"message-annotations", sc.MessageAnnotations}, {"footer", sc.Footer}} {
				if sec.b != nil {
					keyKinds(t, sec.b, sec.name, enc, tl)
				}
			}
			if bytes.Equal(sc.Header, []byte{0x00, 0x53, 0x70, 0x45}) {
				tl.add(enc, "empty-header-section")
			}
			if bytes.Equal(sc.Properties, []byte{0x00, 0x53, 0x73, 0x45}) {
				tl.add(enc, "empty-properties-section")
			}
			if sc.Header != nil {
				tl.add(enc, "header-section")
				if count, nulls := trailingNulls(t, sc.Header); count == 5 && nulls > 0 {
					tl.add(enc, "header-5-fields-trailing-null")
				}
			}
			if sc.FooterFirst {
				tl.add(enc, "footer-before-body")
			}
		}
	}

	// RabbitMQ's deliveries against what the client sent on the same
	// connection: header rewritten, properties added, body sections
	// reordered. The bare message is matched by application-properties
	// and the set of body sections.
	for _, s := range streams {
		if s.Dir != "server" || s.Server != "rabbitmq" {
			continue
		}
		for _, m := range s.Messages {
			got, err := message.Scan(m.Data)
			require.NoError(t, err, m.Name)
			require.NotNil(t, got.Header, "%s: RabbitMQ writes a header on every delivery", m.Name)
			tl.add("rabbitmq", "delivery")
			var match *message.Sections
			for i, want := range sent[s.Conn] {
				if bytes.Equal(got.Bare, want.Bare) {
					match = &sent[s.Conn][i]
					tl.add("rabbitmq", "bare-identical")
					break
				}
			}
			if match == nil {
				for i, want := range sent[s.Conn] {
					emptyData := want.Body == nil && bytes.Equal(got.Body, []byte{0x00, 0x53, 0x75, 0xa0, 0x00})
					if (emptyData || sameBodySet(t, got.Body, want.Body)) && bytes.Equal(got.ApplicationProperties, want.ApplicationProperties) {
						match = &sent[s.Conn][i]
						break
					}
				}
				require.NotNil(t, match, "%s: no sent message with the same body", m.Name)
				if match.Properties == nil && got.Properties != nil {
					tl.add("rabbitmq", "properties-added")
					p, err := message.ParseProperties(got.Properties)
					require.NoError(t, err)
					assert.NotNil(t, p.Subject, "%s: the added properties carry the subject", m.Name)
				}
				if match.Body == nil {
					tl.add("rabbitmq", "empty-data-section-added-for-no-body")
				} else if !bytes.Equal(match.Body, got.Body) {
					tl.add("rabbitmq", "body-sections-reversed")
				}
			}
			if !bytes.Equal(match.Header, got.Header) {
				tl.add("rabbitmq", "header-rewritten")
			}
			if !bytes.Equal(match.MessageAnnotations, got.MessageAnnotations) {
				tl.add("rabbitmq", "message-annotations-rewritten")
			}
		}
	}
	tl.log(t)

	// What the library does: the asserted facts doc/peers.md states.
	assert.Zero(t, tl["goamqp"]["code-c0"]+tl["goamqp"]["code-c1"]+tl["goamqp/msg"]["code-c0"]+tl["goamqp/msg"]["code-c1"],
		"go-amqp writes list32/map32 everywhere")
	assert.Positive(t, tl["goamqp"]["list32-that-fits-list8"])
	assert.Positive(t, tl["goamqp"]["message-annotations-key-long"], "go-amqp writes integer annotation keys as long")
	assert.Positive(t, tl["uamqp"]["message-annotations-key-string"], "uAMQP writes str annotation keys as strings")
	assert.Positive(t, tl["rabbitmq"]["header-rewritten"])
	assert.Positive(t, tl["rabbitmq"]["body-sections-reversed"])
}

// sameBodySet: the same body sections, in any order.
func sameBodySet(t *testing.T, a, b []byte) bool {
	as, bs := bodySections(t, a), bodySections(t, b)
	if len(as) != len(bs) {
		return false
	}
	used := make([]bool, len(bs))
	for _, x := range as {
		found := false
		for j, y := range bs {
			if !used[j] && bytes.Equal(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestAnnotationKeys: what the library's key lookups do with the key
// types peers write. Annotation and footer keys must be symbols or ulongs
// (part 3 §3.2.10); uAMQP and rhea write strings when given strings, and
// go-amqp writes integer keys as long.
func TestAnnotationKeys(t *testing.T) {
	counts := map[string]int{}
	for _, s := range Load(t) {
		if s.Dir != "client" {
			continue
		}
		for _, m := range s.Messages {
			sc, err := message.Scan(m.Data)
			if err != nil {
				continue
			}
			for _, sec := range [][]byte{sc.DeliveryAnnotations, sc.MessageAnnotations, sc.Footer} {
				if sec == nil {
					continue
				}
				var c stream.Cursor
				c.Reset(sec)
				require.True(t, c.Next() && c.Enter() && c.Next() && c.Next() && c.Enter())
				for i := 0; c.Next(); i++ {
					if i%2 == 1 {
						continue
					}
					switch c.Kind() {
					case amqpsax.KindString, amqpsax.KindSymbol:
						// message.Lookup finds string and symbol keys
						// alike: a string key (illegal) is found too.
						key := string(c.Bytes())
						v, err := message.Lookup(sec, key)
						require.NoError(t, err)
						assert.NotEqual(t, amqpsax.KindInvalid, v.Kind(), "%s: Lookup(%q)", m.Name, key)
						counts[s.Client+" "+c.Kind().String()+" key found by message.Lookup"]++
					case amqpsax.KindLong:
						// go-amqp's integer keys are longs, which the spec
						// does not allow: LookupUlong and message.LookupKey
						// with message.Ulong take them too.
						n := c.Int()
						var k stream.Cursor
						k.Reset(sec)
						require.True(t, k.Next() && k.Enter() && k.Next() && k.Next() && k.Enter())
						assert.True(t, k.SeekUlongKey(uint64(n)), "%s: LookupUlong(%d) on a long key", m.Name, n)
						v, err := message.LookupKey(sec, message.UlongKey(uint64(n)))
						require.NoError(t, err)
						assert.NotEqual(t, amqpsax.KindInvalid, v.Kind(), "%s: LookupKey(%d)", m.Name, n)
						counts[s.Client+" long key found by LookupUlong"]++
					case amqpsax.KindUlong:
						n := c.Uint()
						var k stream.Cursor
						k.Reset(sec)
						require.True(t, k.Next() && k.Enter() && k.Next() && k.Next() && k.Enter())
						assert.True(t, k.SeekUlongKey(n), "%s: LookupUlong(%d)", m.Name, n)
						counts[s.Client+" ulong key found by LookupUlong"]++
					}
				}
			}
		}
	}
	t.Logf("%v", counts)
	assert.Positive(t, counts["goamqp long key found by LookupUlong"])
	assert.Positive(t, counts["uamqp string key found by message.Lookup"])
	assert.Positive(t, counts["rhea string key found by message.Lookup"])
}
