package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/bench"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
)

// Workloads are the bench module's workloads that run.sh counts: one of
// each shape (small and medium messages, a large data body, lists of ints
// and of strings, an array of longs).
var Workloads = []string{"small", "medium", "data-64k", "ints-10k", "strings-10k", "longs-10k"}

// Walkers are what run.sh counts on each workload, in its table's order.
var Walkers = []string{"dispatch-nop", "dispatch-batch", "stream-walk", "message-scan", "message-decode", "message-append", "floor"}

func workload(t testing.TB, name string) *bench.Workload {
	for _, w := range bench.Workloads() {
		if w.Name == name {
			return w
		}
	}
	t.Fatalf("no workload %q", name)
	return nil
}

// TestFloorVisitsEveryValue: the floor walks every value of every
// workload, as many as a decoder reports (else its count would be no
// floor), and what the cursor walk and dispatch see agrees.
func TestFloorVisitsEveryValue(t *testing.T) {
	for _, name := range Workloads {
		w := workload(t, name)
		var c Count
		if err := Floor(w.AMQP, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Values != w.Values {
			t.Errorf("%s: floor visits %d values, the workload has %d", name, c.Values, w.Values)
		}
		var n countHandler
		if err := new(dispatch.Decoder).DecodeAll(w.AMQP, &n); err != nil || int(n) != w.Values {
			t.Errorf("%s: dispatch reports %d values (%v), want %d", name, n, err, w.Values)
		}
		var cur stream.Cursor
		if got := walk(&cur, w.AMQP); got != w.Values {
			t.Errorf("%s: the cursor walk visits %d values, want %d", name, got, w.Values)
		}
	}
	for _, bad := range [][]byte{{0xa1, 5, 'a'}, {0xc0, 3, 2, 0x40}, {0x3f}, {0xe0, 3, 1, 0x00, 0x40}} {
		if err := Floor(bad, new(Count)); err == nil {
			t.Errorf("% x: the floor took it", bad)
		}
	}
}

// countHandler counts the values dispatch reports.
type countHandler int

func (n *countHandler) OnNull() error                         { *n++; return nil }
func (n *countHandler) OnBool(bool) error                     { *n++; return nil }
func (n *countHandler) OnUbyte(uint8) error                   { *n++; return nil }
func (n *countHandler) OnUshort(uint16) error                 { *n++; return nil }
func (n *countHandler) OnUint(uint32) error                   { *n++; return nil }
func (n *countHandler) OnUlong(uint64) error                  { *n++; return nil }
func (n *countHandler) OnByte(int8) error                     { *n++; return nil }
func (n *countHandler) OnShort(int16) error                   { *n++; return nil }
func (n *countHandler) OnInt(int32) error                     { *n++; return nil }
func (n *countHandler) OnLong(int64) error                    { *n++; return nil }
func (n *countHandler) OnFloat(float32) error                 { *n++; return nil }
func (n *countHandler) OnDouble(float64) error                { *n++; return nil }
func (n *countHandler) OnDecimal32(amqpsax.Decimal32) error   { *n++; return nil }
func (n *countHandler) OnDecimal64(amqpsax.Decimal64) error   { *n++; return nil }
func (n *countHandler) OnDecimal128(amqpsax.Decimal128) error { *n++; return nil }
func (n *countHandler) OnChar(rune) error                     { *n++; return nil }
func (n *countHandler) OnTimestamp(int64) error               { *n++; return nil }
func (n *countHandler) OnUUID(uuid.UUID) error                { *n++; return nil }
func (n *countHandler) OnBinary([]byte) error                 { *n++; return nil }
func (n *countHandler) OnString([]byte) error                 { *n++; return nil }
func (n *countHandler) OnSymbol([]byte) error                 { *n++; return nil }
func (n *countHandler) OnListStart(int) error                 { *n++; return nil }
func (n *countHandler) OnListEnd() error                      { return nil }
func (n *countHandler) OnMapStart(int) error                  { *n++; return nil }
func (n *countHandler) OnMapEnd() error                       { return nil }
func (n *countHandler) OnArrayStart(int, amqpsax.Kind) error  { *n++; return nil }
func (n *countHandler) OnArrayEnd() error                     { return nil }
func (n *countHandler) OnDescribedStart() error               { *n++; return nil }
func (n *countHandler) OnDescribedEnd() error                 { return nil }

// batchNop takes every numeric array in one call.
type batchNop struct{ amqpsax.NopHandler }

func (batchNop) OnBoolArray([]bool) error       { return nil }
func (batchNop) OnUbyteArray([]uint8) error     { return nil }
func (batchNop) OnUshortArray([]uint16) error   { return nil }
func (batchNop) OnUintArray([]uint32) error     { return nil }
func (batchNop) OnUlongArray([]uint64) error    { return nil }
func (batchNop) OnByteArray([]int8) error       { return nil }
func (batchNop) OnShortArray([]int16) error     { return nil }
func (batchNop) OnIntArray([]int32) error       { return nil }
func (batchNop) OnLongArray([]int64) error      { return nil }
func (batchNop) OnFloatArray([]float32) error   { return nil }
func (batchNop) OnDoubleArray([]float64) error  { return nil }
func (batchNop) OnCharArray([]rune) error       { return nil }
func (batchNop) OnTimestampArray([]int64) error { return nil }

var sink uint64

// walk visits every value with the cursor, reading each scalar through
// its getter, and returns how many it visited.
func walk(c *stream.Cursor, buf []byte) (values int) {
	c.Reset(buf)
	depth := 0
	for {
		if !c.Next() {
			if c.Err() != nil {
				panic(c.Err())
			}
			if depth == 0 {
				return values
			}
			c.Exit()
			depth--
			continue
		}
		values++
		switch c.Kind() {
		case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
			c.Enter()
			depth++
		case amqpsax.KindString, amqpsax.KindSymbol, amqpsax.KindBinary:
			sink += uint64(len(c.Bytes()))
		case amqpsax.KindInt, amqpsax.KindLong, amqpsax.KindByte, amqpsax.KindShort:
			sink += uint64(c.Int())
		case amqpsax.KindUint, amqpsax.KindUlong, amqpsax.KindUbyte, amqpsax.KindUshort:
			sink += c.Uint()
		}
	}
}

// TestWriteWorkloads writes each workload to $PERF_DIR/<name>.bin, so
// that the counting runs under valgrind read them rather than build them
// (which is slow there). run.sh runs it first, natively.
func TestWriteWorkloads(t *testing.T) {
	dir := os.Getenv("PERF_DIR")
	if dir == "" {
		t.Skip("run.sh sets PERF_DIR")
	}
	for _, name := range Workloads {
		if err := os.WriteFile(filepath.Join(dir, name+".bin"), workload(t, name).AMQP, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCallgrind runs one walker ($PERF_WALKER) over one workload
// ($PERF_DIR/$PERF_WORKLOAD.bin) $PERF_N times, inside a function whose
// name starts with cg: run.sh has callgrind count only there.
func TestCallgrind(t *testing.T) {
	name, walker := os.Getenv("PERF_WORKLOAD"), os.Getenv("PERF_WALKER")
	if name == "" || walker == "" {
		t.Skip("run.sh sets PERF_WORKLOAD and PERF_WALKER, under callgrind")
	}
	n, err := strconv.Atoi(os.Getenv("PERF_N"))
	if err != nil || n <= 0 {
		t.Fatalf("PERF_N=%q", os.Getenv("PERF_N"))
	}
	buf, err := os.ReadFile(filepath.Join(os.Getenv("PERF_DIR"), name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	// callgrind follows calls per OS thread: keep this goroutine on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var d dispatch.Decoder
	var c stream.Cursor
	// One warm-up pass outside the count: stacks grown, code paged in.
	if err := d.DecodeAll(buf, amqpsax.NopHandler{}); err != nil {
		t.Fatal(err)
	}
	walk(&c, buf)
	if err := Floor(buf, new(Count)); err != nil {
		t.Fatal(err)
	}
	// and a scan: a goroutine stack that grows inside a counted function
	// loses callgrind the call (its count then stops early)
	if _, err := message.Scan(buf); err != nil {
		t.Fatal(err)
	}
	switch walker {
	case "dispatch-nop":
		cgDispatch(&d, buf, amqpsax.NopHandler{}, n)
	case "dispatch-batch":
		cgDispatch(&d, buf, batchNop{}, n)
	case "stream-walk":
		cgWalk(&c, buf, n)
	case "message-scan":
		cgScan(buf, n)
	case "message-decode":
		var m message.Message
		if err := m.DecodeNoCopy(buf); err != nil {
			t.Fatal(err)
		}
		cgDecode(&m, buf, n)
	case "message-append":
		var m message.Message
		if err := m.Decode(buf); err != nil {
			t.Fatal(err)
		}
		out, err := m.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		cgAppend(&m, out, n)
	case "floor":
		cgFloor(buf, new(Count), n)
	default:
		t.Fatalf("PERF_WALKER=%q: one of %v", walker, Walkers)
	}
	fmt.Println("counted", walker, name, n)
}

//go:noinline
func cgDispatch(d *dispatch.Decoder, buf []byte, h amqpsax.Handler, n int) {
	for range n {
		if err := d.DecodeAll(buf, h); err != nil {
			panic(err)
		}
	}
}

//go:noinline
func cgWalk(c *stream.Cursor, buf []byte, n int) {
	for range n {
		walk(c, buf)
	}
}

//go:noinline
func cgScan(buf []byte, n int) {
	for range n {
		s, err := message.Scan(buf)
		if err != nil {
			panic(err)
		}
		sink += uint64(len(s.Body))
	}
}

//go:noinline
func cgDecode(m *message.Message, buf []byte, n int) {
	for range n {
		if err := m.DecodeNoCopy(buf); err != nil {
			panic(err)
		}
	}
}

//go:noinline
func cgAppend(m *message.Message, out []byte, n int) {
	for range n {
		var err error
		if out, err = m.Append(out[:0]); err != nil {
			panic(err)
		}
	}
}

//go:noinline
func cgFloor(buf []byte, v Visitor, n int) {
	for range n {
		if err := Floor(buf, v); err != nil {
			panic(err)
		}
	}
}
