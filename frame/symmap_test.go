package frame_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/stream"
)

// TestSymbolMap: each entry a SymbolMap adds is the value package encode
// writes under a symbol key, in a map8 when it fits and a map32 when
// not; Lookup reads every value back.
func TestSymbolMap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(m *frame.SymbolMap)
		hex   string // the map; "" for nil
	}{
		{"empty", func(m *frame.SymbolMap) {}, ""},
		{"string", func(m *frame.SymbolMap) { m.String("a", "b") }, "c1 07 02 a3 01 61 a1 01 62"},
		{"symbol stays a symbol", func(m *frame.SymbolMap) { m.Symbol("a", "b") }, "c1 07 02 a3 01 61 a3 01 62"},
		{"binary", func(m *frame.SymbolMap) { m.Binary("a", []byte{9}) }, "c1 07 02 a3 01 61 a0 01 09"},
		{"bool", func(m *frame.SymbolMap) { m.Bool("a", true) }, "c1 05 02 a3 01 61 41"},
		{"uint", func(m *frame.SymbolMap) { m.Uint("a", 0).Uint("b", 7) }, "c1 0a 04 a3 01 61 43 a3 01 62 52 07"},
		{"ulong", func(m *frame.SymbolMap) { m.Ulong("a", 1<<40) }, "c1 0d 02 a3 01 61 80 00 00 01 00 00 00 00 00"},
		{"int", func(m *frame.SymbolMap) { m.Int("a", -1) }, "c1 06 02 a3 01 61 54 ff"},
		{"long", func(m *frame.SymbolMap) { m.Long("a", -3) }, "c1 06 02 a3 01 61 55 fd"},
		{"value", func(m *frame.SymbolMap) { m.Value("a", encode.AppendTimestamp(nil, 1)) }, "c1 0d 02 a3 01 61 83 00 00 00 00 00 00 00 01"},
		{"described", func(m *frame.SymbolMap) { m.Described("f", 0x2b, encode.AppendCodeList0(nil)) }, "c1 08 02 a3 01 66 00 53 2b 45"},
		{"selector", func(m *frame.SymbolMap) { m.Selector("x") },
			"c1 31 02 a3 21 " + hex.EncodeToString([]byte(frame.SelectorFilterKey)) + " 00 80 00 00 46 8c 00 00 00 04 a1 01 78"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m frame.SymbolMap
			tc.build(&m)
			got := m.Map()
			if want := strings.ReplaceAll(tc.hex, " ", ""); hex.EncodeToString(got) != want {
				t.Fatalf("% x\nwant %s", got, tc.hex)
			}
			if got != nil && got.Len() != m.Len() {
				t.Fatalf("Len %d, built %d", got.Len(), m.Len())
			}
		})
	}

	// Big: a map32, every value found by its key.
	var m frame.SymbolMap
	for i := range 40 {
		m.String(fmt.Sprintf("key-%d", i), strings.Repeat("v", i))
	}
	big := m.Map()
	if big[0] != 0xd1 || big.Len() != 40 {
		t.Fatalf("% x", big[:9])
	}
	for i := range 40 {
		v, ok := big.Lookup(fmt.Sprintf("key-%d", i))
		var c stream.Cursor
		c.Reset(v)
		if !ok || !c.Next() || string(c.Bytes()) != strings.Repeat("v", i) {
			t.Fatalf("key-%d: % x", i, v)
		}
	}

	// Map copies: the builder goes on without changing a map returned.
	m.Reset()
	m.Symbol("a", "b")
	first := m.Map()
	m.String("c", "d")
	if first.Len() != 1 || m.Map().Len() != 2 {
		t.Fatal(first.Len(), m.Map().Len())
	}
}

// A builder reused with Reset and Append allocates nothing once warm.
func TestSymbolMapAllocs(t *testing.T) {
	var m frame.SymbolMap
	buf := make([]byte, 0, 512)
	n := testing.AllocsPerRun(100, func() {
		m.Reset()
		m.String("product", "amqpsax").Symbol("k", "v").Uint("n", 300).Selector("a = 1")
		buf = m.Append(buf[:0])
	})
	if n != 0 {
		t.Fatalf("%v allocations", n)
	}
	if !bytes.Contains(buf, []byte("amqpsax")) {
		t.Fatal(buf)
	}
}

// Build the properties of an open or attach, and a receiver's filter.
func ExampleSymbolMap() {
	var p frame.SymbolMap
	p.String("product", "amqpsax").Symbol("com.microsoft:entity-type", "com.microsoft:queue")
	props := p.Map() // engine.Config.Properties, engine.LinkOptions.Properties

	var f frame.SymbolMap
	f.Selector("color = 'red'")
	src := frame.Source{Address: []byte("orders"), Filter: f.Map()} // engine.LinkOptions.Source

	v, _ := props.Lookup("product")
	fmt.Println(props.Len(), hex.EncodeToString(v), src.Filter.Len())
	// Output: 2 a107616d7170736178 1
}
