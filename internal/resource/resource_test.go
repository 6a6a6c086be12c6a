// Package resource holds the resource test suite: adversarial inputs, each
// built at two sizes, fed to every entry point that decodes (dispatch,
// stream and its helpers, message, encode.Writer fed by either decoder).
// Work is counted, never timed: values read, values skipped, bytes
// validated and compared (internal/wire's counters, kept only in a build
// with the tag amqpsax_work), and bytes and objects allocated
// (runtime.MemStats). A test fails when doubling the input more than
// doubles any of them, plus a small constant.
//
// Run by `go test ./...`: a plain build has no counters, so the test
// builds and runs itself again with the tag.
package resource

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// TestResources runs the suite in a counting build.
func TestResources(t *testing.T) {
	if wire.Counting {
		t.Skip("this is the counting build: the cases run as TestLinear")
	}
	if testing.Short() {
		t.Skip("builds the package again with -tags amqpsax_work")
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "test", "-count=1", "-tags", "amqpsax_work", "-run", "^TestLinear$", ".")
	cmd.Dir = filepath.Dir(file)
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -tags amqpsax_work: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("ok")) {
		t.Fatalf("the counting build ran nothing:\n%s", out)
	}
}

// cost is the work one run did.
type cost struct {
	values, skipped, checked, compared, sections, stepped int
	bytes, objects                                        uint64
}

func (c cost) String() string {
	return fmt.Sprintf("values %d, skipped %d, checked %d B, compared %d B, sections %d, stepped %d B, allocated %d B in %d objects",
		c.values, c.skipped, c.checked, c.compared, c.sections, c.stepped, c.bytes, c.objects)
}

// measure runs f (after one warm-up run, so reusable decoders have grown
// their stacks) and returns its work. The heap counters are the whole
// process's, so another goroutine's allocation can land in a run; f runs
// three times and the least allocated is kept (the work counters are the
// same in every run).
func measure(f func()) cost {
	f()
	c := cost{bytes: math.MaxUint64, objects: math.MaxUint64}
	for range 3 {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		wire.Work = wire.Counters{}
		f()
		w := wire.Work
		runtime.ReadMemStats(&m1)
		c.values, c.skipped, c.checked, c.compared, c.sections, c.stepped = w.Values, w.Skipped, w.Checked, w.Compared, w.Sections, w.Stepped
		c.bytes = min(c.bytes, m1.TotalAlloc-m0.TotalAlloc)
		c.objects = min(c.objects, m1.Mallocs-m0.Mallocs)
	}
	return c
}

// slack is the constant a doubled input may add to each measure: decoder
// state made on first use, the testing package's own bookkeeping.
const (
	slackWork    = 64
	slackBytes   = 16 << 10
	slackObjects = 16
)

// entry is one way of decoding an input.
type entry struct {
	name string
	run  func(in []byte) error
}

// attack is an adversarial construction: build(n) makes the input of
// size parameter n; the input of 2n is about twice as long.
type attack struct {
	name  string
	build func(n int) []byte
	n     int
	runs  []entry
	// allocating entry points (a caller's slice filled with what the input
	// holds) may allocate in proportion to the input; the rest must not
	// allocate at all once warm.
	allocates bool
	bad       bool // the input is malformed: every entry point must fail
}

func TestLinear(t *testing.T) {
	if !wire.Counting {
		t.Skip("needs -tags amqpsax_work (TestResources runs it so)")
	}
	for _, a := range attacks() {
		small, large := a.build(a.n), a.build(2*a.n)
		if r := float64(len(large)) / float64(len(small)); r < 1.9 || r > 2.1 {
			t.Fatalf("%s: inputs of %d and %d bytes: not a doubling", a.name, len(small), len(large))
		}
		for _, e := range a.runs {
			t.Run(a.name+"/"+e.name, func(t *testing.T) {
				var errS, errL error
				cs := measure(func() { errS = e.run(small) })
				cl := measure(func() { errL = e.run(large) })
				t.Logf("%d B: %v (err %v)", len(small), cs, errS)
				t.Logf("%d B: %v (err %v)", len(large), cl, errL)
				if a.bad {
					if errS == nil || errL == nil {
						t.Errorf("malformed input accepted")
					}
				} else if errS != nil || errL != nil {
					t.Errorf("well-formed input rejected: %v; %v", errS, errL)
				}
				grows := func(what string, s, l, slack uint64) {
					if l > 2*s+slack {
						t.Errorf("%s grows faster than the input: %d for %d bytes, %d for %d bytes",
							what, s, len(small), l, len(large))
					}
				}
				grows("values read", uint64(cs.values), uint64(cl.values), slackWork)
				grows("values skipped", uint64(cs.skipped), uint64(cl.skipped), slackWork)
				grows("bytes validated", uint64(cs.checked), uint64(cl.checked), slackWork)
				grows("bytes compared", uint64(cs.compared), uint64(cl.compared), slackWork)
				grows("sections scanned", uint64(cs.sections), uint64(cl.sections), slackWork)
				grows("bytes stepped", uint64(cs.stepped), uint64(cl.stepped), slackWork)
				grows("bytes allocated", cs.bytes, cl.bytes, slackBytes)
				grows("objects allocated", cs.objects, cl.objects, slackObjects)
				if !a.allocates && cl.objects > slackObjects {
					t.Errorf("allocated %d objects for %d bytes", cl.objects, len(large))
				}
				// Every measure is bounded by a constant times the
				// input length, whatever its growth.
				for _, m := range []int{cl.values, cl.skipped, cl.checked, cl.compared, cl.sections, cl.stepped} {
					if m > 8*1024*len(large) {
						t.Errorf("work %d for %d bytes", m, len(large))
					}
				}
			})
		}
	}
}

// The entry points. Each walks or reads everything it can, with
// validation on where the package has it, and returns the error.
var (
	// Decoders and Writers are kept from run to run, as a server keeps
	// them: warm, they allocate nothing.
	dv          = dispatch.Decoder{Validate: true}
	dn          dispatch.Decoder
	wd, ws      encode.Writer
	dispatchNop = entry{"dispatch", func(in []byte) error {
		return dv.DecodeAll(in, amqpsax.NopHandler{})
	}}
	dispatchOff = entry{"dispatch-novalidate", func(in []byte) error {
		return dn.DecodeAll(in, amqpsax.NopHandler{})
	}}
	dispatchWriter = entry{"dispatch-writer", func(in []byte) error {
		wd.Reset()
		return dv.DecodeAll(in, &wd)
	}}
	streamWalk = entry{"stream-walk", func(in []byte) error {
		c := stream.Cursor{Validate: true}
		c.Reset(in)
		visit(&c, false)
		return c.Err()
	}}
	streamRaw = entry{"stream-walk-raw", func(in []byte) error {
		c := stream.Cursor{Validate: true}
		c.Reset(in)
		visit(&c, true)
		return c.Err()
	}}
	streamSkip = entry{"stream-skip", func(in []byte) error {
		c := stream.Cursor{Validate: true}
		c.Reset(in)
		for c.Next() {
		}
		return c.Err()
	}}
	streamWriter = entry{"stream-writer", func(in []byte) error {
		c := stream.Cursor{Validate: true}
		c.Reset(in)
		ws.Reset()
		return emitAll(&c, &ws)
	}}
	messageScan = entry{"message-scan", func(in []byte) error {
		_, err := message.Scan(in)
		return err
	}}
	// A Message kept from run to run, as a client keeps one: Decode
	// copies the input into its storage and checks every section whole.
	msg           message.Message
	messageDecode = entry{"message-Decode", func(in []byte) error {
		return msg.Decode(in)
	}}
	messageNoCopy = entry{"message-DecodeNoCopy", func(in []byte) error {
		return msg.DecodeNoCopy(in)
	}}
)

var decoders = []entry{dispatchNop, dispatchOff, dispatchWriter, streamWalk, streamRaw, streamSkip, streamWriter}

// visit reads every value of the cursor's level and everything in it,
// calling every getter that applies; with raw, also Raw on every value.
func visit(c *stream.Cursor, raw bool) {
	for c.Next() {
		if raw {
			c.Raw()
		}
		switch c.Kind() {
		case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
			c.Descriptor()
			if c.Enter() {
				visit(c, raw)
				c.Exit()
			}
		case amqpsax.KindBinary, amqpsax.KindString, amqpsax.KindSymbol:
			c.Bytes()
		}
	}
}

// emitAll reports the values of the cursor's level to h, as dispatch
// would.
func emitAll(c *stream.Cursor, h amqpsax.Handler) error {
	for c.Next() {
		if err := c.Emit(h); err != nil {
			return err
		}
	}
	return c.Err()
}

// be32 appends v as four big-endian bytes.
func be32(b []byte, v int) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

// list32 wraps the encoded values body (count of them) in a list32.
func list32(count int, body []byte) []byte {
	b := be32([]byte{byte(amqpsax.CodeList32)}, 4+len(body))
	return append(be32(b, count), body...)
}

// describedArray is the validation attack of the issue "Hostile input":
// an array32 of zero-width elements (null) whose described constructor
// has an l-byte sym32 descriptor, with as many elements as the decoders
// allow (255 + 32 × size).
func describedArray(l int) []byte {
	size := 4 + 1 + 5 + l + 1 // count, 0x00, sym32 header, text, element code
	count := wire.ZeroWidthBase + wire.ZeroWidthPerByte*size
	b := be32([]byte{byte(amqpsax.CodeArray32)}, size)
	b = be32(b, count)
	b = append(b, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSym32))
	b = be32(b, l)
	b = append(b, bytes.Repeat([]byte{'a'}, l)...)
	return append(b, byte(amqpsax.CodeNull))
}

// appProps is a message whose application-properties section holds n
// entries with long keys that all share a prefix with the key looked up,
// and the key itself last.
func appProps(n int) []byte {
	var body []byte
	long := strings.Repeat("k", 200)
	for i := range n {
		body = encode.AppendString(body, long+fmt.Sprint(i))
		body = encode.AppendNull(body)
	}
	body = encode.AppendString(body, long)
	body = encode.AppendUint(body, 1)
	m := be32([]byte{byte(amqpsax.CodeMap32)}, 4+len(body))
	m = append(be32(m, 2*n+2), body...)
	return append([]byte{0x00, byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorApplicationProperties)}, m...)
}

func attacks() []attack {
	descChain := func(depth int) []byte { // 00 40 00 40 … 45: each value described
		return append(bytes.Repeat([]byte{0x00, 0x40}, depth), 0x45)
	}
	descriptorChain := func(depth int) []byte { // 00 00 00 … 40 … 40 40: each descriptor described
		b := bytes.Repeat([]byte{0x00}, depth)
		return append(append(b, 0x53, 0x01), bytes.Repeat([]byte{0x40}, depth)...)
	}
	return []attack{
		{name: "validated descriptor replayed for zero-width elements", n: 4096,
			build: describedArray, runs: decoders},
		{name: "nested list32", n: 400, build: func(n int) []byte {
			b := []byte{byte(amqpsax.CodeList0)}
			for range n {
				b = list32(1, b)
			}
			return b
		}, runs: decoders},
		{name: "chain of described values", n: 400, build: descChain, runs: decoders},
		{name: "chains of described descriptors at the depth limit", n: 8, build: func(n int) []byte {
			// The descriptor of a described value has no size: Raw on it
			// walks it, at every level. Bounded by MaxDepth: linear in the
			// number of chains, each as deep as allowed.
			one := descriptorChain(amqpsax.DefaultMaxDepth - 1)
			return list32(n, bytes.Repeat(one, n))
		}, runs: decoders},
		{name: "arrays of 255 nulls", n: 2048, build: func(n int) []byte {
			return list32(n, bytes.Repeat([]byte{0xe0, 0x02, 0xff, 0x40}, n))
		}, runs: decoders},
		{name: "arrays of 255 uint0, read into a slice", n: 2048, allocates: true, build: func(n int) []byte {
			return list32(n, bytes.Repeat([]byte{0xe0, 0x02, 0xff, 0x43}, n))
		}, runs: []entry{{"stream-AppendUints", func(in []byte) error {
			var c stream.Cursor
			c.Reset(in)
			var out []uint64
			c.Next()
			c.Enter()
			for c.Next() {
				out = c.AppendUints(out)
			}
			return c.Err()
		}}}},
		{name: "huge claimed counts", n: 2048, bad: true, build: func(n int) []byte {
			one := binary.BigEndian.AppendUint32(be32([]byte{byte(amqpsax.CodeList32)}, 4), 1<<31) // count cannot fit in size
			return bytes.Repeat(one, n)
		}, runs: decoders},
		{name: "zero-width array of 2^32-1 nulls", n: 2048, bad: true, build: func(n int) []byte {
			b := []byte{byte(amqpsax.CodeArray32)}
			b = be32(b, 5+n)
			b = append(binary.BigEndian.AppendUint32(b, 1<<32-1), 0x40)
			return append(b, make([]byte, n)...)
		}, runs: decoders},
		{name: "long descriptors", n: 256, build: func(n int) []byte {
			var body []byte
			for range n {
				body = append(body, 0x00, byte(amqpsax.CodeSym32))
				body = be32(body, 300)
				body = append(append(body, bytes.Repeat([]byte{'d'}, 300)...), 0x40)
			}
			return list32(n, body)
		}, runs: decoders},
		{name: "long keys for Lookup", n: 256, build: appProps, runs: []entry{
			{"stream-Lookup", func(in []byte) error {
				var c stream.Cursor
				c.Reset(in)
				c.Next()
				c.Enter()
				c.Next()
				c.Next()
				c.Enter()
				if !c.SeekKey(strings.Repeat("k", 200)) {
					return fmt.Errorf("key not found: %v", c.Err())
				}
				return c.Err()
			}},
			{"message-Lookup", func(in []byte) error {
				v, err := message.Lookup(in, strings.Repeat("k", 200))
				if v.Kind() == amqpsax.KindInvalid && err == nil {
					return fmt.Errorf("key not found")
				}
				return err
			}},
			messageScan, messageDecode,
		}},
		{name: "message of many sections", n: 1024, build: func(n int) []byte {
			b := []byte{0x00, 0x53, 0x73, 0x45}
			for range n {
				b = append(b, 0x00, 0x53, 0x75, 0xa0, 0x01, 0x61) // data sections
			}
			return b
		}, runs: append([]entry{messageScan, messageDecode, messageNoCopy}, decoders...)},
		{name: "application properties of nested lists, each with a described value at the bottom", n: 512,
			build: func(n int) []byte {
				// Decode's tight loops follow each value 8 lists deep,
				// meet the described value and leave the map to the entry
				// by entry read and the full walk: each byte a constant
				// number of times, not once per level.
				v := []byte{0x00, 0x53, 0x01, 0x45}
				for range 9 {
					v = list32(1, v)
				}
				var body []byte
				for i := range n {
					body = encode.AppendString(body, fmt.Sprintf("k%06d", i))
					body = append(body, v...)
				}
				m := be32([]byte{byte(amqpsax.CodeMap32)}, 4+len(body))
				m = append(be32(m, 2*n), body...)
				return append([]byte{0x00, byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorApplicationProperties)}, m...)
			}, runs: []entry{messageScan, messageDecode, messageNoCopy}},
		{name: "amqp-value of lists nested as deep as flat follows, a fault at the end", n: 256, bad: true,
			build: func(n int) []byte {
				one := []byte{0xa1, 0x01, 'x'}
				for range 8 {
					one = list32(1, one)
				}
				body := list32(n+1, append(bytes.Repeat(one, n), 0xa1, 0x05, 'x')) // the last string runs past its list
				return append([]byte{0x00, byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorAMQPValue)}, body...)
			}, runs: []entry{messageDecode, messageNoCopy}},
	}
}

// BenchmarkValidatedDescriptor decodes the validation attack of the issue
// "Hostile input" at its 65,552-byte size, with validation on and off:
// with the descriptor checked once per array the two cost about the same.
func BenchmarkValidatedDescriptor(b *testing.B) {
	in := describedArray(65536)
	for _, validate := range []bool{false, true} {
		b.Run(fmt.Sprintf("dispatch/validate=%v", validate), func(b *testing.B) {
			d := dispatch.Decoder{Validate: validate}
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if err := d.DecodeAll(in, amqpsax.NopHandler{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("stream/validate=%v", validate), func(b *testing.B) {
			c := stream.Cursor{Validate: validate}
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				c.Reset(in)
				visit(&c, false)
				if c.Err() != nil {
					b.Fatal(c.Err())
				}
			}
		})
	}
}
