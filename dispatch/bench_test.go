package dispatch

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The throughput suite. Each case is an input (or several, decoded one
// after another per op) and the number of values a handler must see in
// it, counted while the input was built, or from Proton's trace for the
// corpus messages. BenchmarkDecode runs every case as a sub-benchmark
// named for benchstat (Decode/ints, Decode/array-longs-batch, …), and
// TestBenchmarkBodies runs the same body once per case, so that the
// benchmarks cannot rot: it checks the error, the value count and that
// the body allocates nothing.
//
//	go test -run '^$' -bench . -benchmem -count 6 ./dispatch/ > old.txt
//	go run golang.org/x/perf/cmd/benchstat@latest old.txt

// benchValues is the number of values in each per-type input.
const benchValues = 1000

type benchCase struct {
	name     string
	inputs   [][]byte // decoded with DecodeAll, one after another, per op
	want     int      // values seen per op (…Start counts one, …End none; a batch counts its elements)
	batch    bool     // use a BatchHandler
	validate bool     // Decoder.Validate
}

func (bc *benchCase) size() (n int64) {
	for _, in := range bc.inputs {
		n += int64(len(in))
	}
	return n
}

func (bc *benchCase) decoder() *Decoder { return &Decoder{Validate: bc.validate} }

func (bc *benchCase) handler() valueCounter {
	if bc.batch {
		return &batchValueCounter{}
	}
	return &elemCounter{}
}

// decode is the body of the benchmark: one op.
func (bc *benchCase) decode(d *Decoder, h amqpsax.Handler) error {
	for _, in := range bc.inputs {
		if err := d.DecodeAll(in, h); err != nil {
			return err
		}
	}
	return nil
}

func BenchmarkDecode(b *testing.B) {
	for _, bc := range benchCases(b) {
		b.Run(bc.name, func(b *testing.B) {
			d, h := bc.decoder(), bc.handler()
			if err := bc.decode(d, h); err != nil { // warm the decoder's stack and batch buffers
				b.Fatal(err)
			}
			h.reset()
			b.SetBytes(bc.size())
			b.ReportAllocs()
			ops := 0
			for b.Loop() {
				if err := bc.decode(d, h); err != nil {
					b.Fatal(err)
				}
				ops++
			}
			if got := h.values(); got != ops*bc.want {
				b.Fatalf("%d values in %d ops, want %d per op", got, ops, bc.want)
			}
		})
	}
}

// TestBenchmarkBodies runs the body of each benchmark once.
func TestBenchmarkBodies(t *testing.T) {
	for _, bc := range benchCases(t) {
		t.Run(bc.name, func(t *testing.T) {
			d, h := bc.decoder(), bc.handler()
			require.NoError(t, bc.decode(d, h))
			assert.Equal(t, bc.want, h.values(), "values")
			if bh, ok := h.(*batchValueCounter); ok {
				assert.Positive(t, bh.batches, "batches delivered")
			}
			h.reset()
			assert.Zero(t, testing.AllocsPerRun(10, func() { _ = bc.decode(d, h) }), "allocs per op")
		})
	}
}

// valueCounter is a handler that does nothing but count values.
type valueCounter interface {
	amqpsax.Handler
	values() int
	reset()
}

// elemCounter counts every value it is handed: a primitive, or the start
// of a list, map, array or described value. It is not a BatchHandler.
type elemCounter struct{ n int }

func (c *elemCounter) values() int { return c.n }
func (c *elemCounter) reset()      { *c = elemCounter{} }

func (c *elemCounter) OnNull() error                         { c.n++; return nil }
func (c *elemCounter) OnBool(bool) error                     { c.n++; return nil }
func (c *elemCounter) OnUbyte(uint8) error                   { c.n++; return nil }
func (c *elemCounter) OnUshort(uint16) error                 { c.n++; return nil }
func (c *elemCounter) OnUint(uint32) error                   { c.n++; return nil }
func (c *elemCounter) OnUlong(uint64) error                  { c.n++; return nil }
func (c *elemCounter) OnByte(int8) error                     { c.n++; return nil }
func (c *elemCounter) OnShort(int16) error                   { c.n++; return nil }
func (c *elemCounter) OnInt(int32) error                     { c.n++; return nil }
func (c *elemCounter) OnLong(int64) error                    { c.n++; return nil }
func (c *elemCounter) OnFloat(float32) error                 { c.n++; return nil }
func (c *elemCounter) OnDouble(float64) error                { c.n++; return nil }
func (c *elemCounter) OnDecimal32(amqpsax.Decimal32) error   { c.n++; return nil }
func (c *elemCounter) OnDecimal64(amqpsax.Decimal64) error   { c.n++; return nil }
func (c *elemCounter) OnDecimal128(amqpsax.Decimal128) error { c.n++; return nil }
func (c *elemCounter) OnChar(rune) error                     { c.n++; return nil }
func (c *elemCounter) OnTimestamp(int64) error               { c.n++; return nil }
func (c *elemCounter) OnUUID(uuid.UUID) error                { c.n++; return nil }
func (c *elemCounter) OnBinary([]byte) error                 { c.n++; return nil }
func (c *elemCounter) OnString([]byte) error                 { c.n++; return nil }
func (c *elemCounter) OnSymbol([]byte) error                 { c.n++; return nil }
func (c *elemCounter) OnListStart(int) error                 { c.n++; return nil }
func (c *elemCounter) OnListEnd() error                      { return nil }
func (c *elemCounter) OnMapStart(int) error                  { c.n++; return nil }
func (c *elemCounter) OnMapEnd() error                       { return nil }
func (c *elemCounter) OnArrayStart(int, amqpsax.Kind) error  { c.n++; return nil }
func (c *elemCounter) OnArrayEnd() error                     { return nil }
func (c *elemCounter) OnDescribedStart() error               { c.n++; return nil }
func (c *elemCounter) OnDescribedEnd() error                 { return nil }

// batchValueCounter is an elemCounter that also takes batches, counting
// their elements.
type batchValueCounter struct {
	elemCounter
	batches int
}

func (c *batchValueCounter) reset() { *c = batchValueCounter{} }

func (c *batchValueCounter) add(n int) error { c.n += n; c.batches++; return nil }

func (c *batchValueCounter) OnBoolArray(v []bool) error       { return c.add(len(v)) }
func (c *batchValueCounter) OnUbyteArray(v []uint8) error     { return c.add(len(v)) }
func (c *batchValueCounter) OnUshortArray(v []uint16) error   { return c.add(len(v)) }
func (c *batchValueCounter) OnUintArray(v []uint32) error     { return c.add(len(v)) }
func (c *batchValueCounter) OnUlongArray(v []uint64) error    { return c.add(len(v)) }
func (c *batchValueCounter) OnByteArray(v []int8) error       { return c.add(len(v)) }
func (c *batchValueCounter) OnShortArray(v []int16) error     { return c.add(len(v)) }
func (c *batchValueCounter) OnIntArray(v []int32) error       { return c.add(len(v)) }
func (c *batchValueCounter) OnLongArray(v []int64) error      { return c.add(len(v)) }
func (c *batchValueCounter) OnFloatArray(v []float32) error   { return c.add(len(v)) }
func (c *batchValueCounter) OnDoubleArray(v []float64) error  { return c.add(len(v)) }
func (c *batchValueCounter) OnCharArray(v []rune) error       { return c.add(len(v)) }
func (c *batchValueCounter) OnTimestampArray(v []int64) error { return c.add(len(v)) }

var _ amqpsax.BatchHandler = (*batchValueCounter)(nil)

// gen builds an input and counts the values in it as they are appended:
// g.v(encode.AppendInt(g.b, 1)) appends one value. A list, map or
// described value counts one for itself, and its contents count apart.
type gen struct {
	b []byte
	n int
}

func (g *gen) v(b []byte) { g.b = b; g.n++ }

// list appends a list of the count values elems appends.
func (g *gen) list(count int, elems func()) {
	start := len(g.b)
	g.v(encode.BeginList(g.b))
	elems()
	g.b = encode.EndList(g.b, start, count)
}

// dmap appends a map of pairs key/value pairs that pairs appends.
func (g *gen) dmap(pairs int, kvs func()) {
	start := len(g.b)
	g.v(encode.BeginMap(g.b))
	kvs()
	g.b = encode.EndMap(g.b, start, pairs)
}

// described appends the described value 0x00 ulong(desc) value.
func (g *gen) described(desc uint64, value func()) {
	g.v(encode.AppendDescribed(g.b))
	g.v(encode.AppendUlong(g.b, desc))
	value()
}

// listOf returns a case: a list of benchValues values that one appends.
func listOf(name string, one func(g *gen, r *rand.Rand)) benchCase {
	r := rand.New(rand.NewPCG(1, 2))
	var g gen
	g.list(benchValues, func() {
		for range benchValues {
			one(&g, r)
		}
	})
	return benchCase{name: name, inputs: [][]byte{g.b}, want: g.n}
}

// arrayOf returns the two cases of an array of benchValues elements of
// code c: element by element, and to a BatchHandler.
func arrayOf(name string, c amqpsax.Code, elem func(r *rand.Rand) int64) []benchCase {
	r := rand.New(rand.NewPCG(1, 2))
	b := encode.BeginArray(nil, c)
	for range benchValues {
		b = encode.AppendIntElem(b, c, elem(r))
	}
	b = encode.EndArray(b, 0, benchValues)
	return []benchCase{
		{name: name, inputs: [][]byte{b}, want: 1 + benchValues},
		{name: name + "-batch", inputs: [][]byte{b}, want: 1 + benchValues, batch: true},
	}
}

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:"

func word(r *rand.Rand, lo, hi int) string {
	var s strings.Builder
	for range lo + r.IntN(hi-lo+1) {
		if r.IntN(20) == 0 {
			s.WriteString("é") // now and then two bytes of UTF-8
		} else {
			s.WriteByte(letters[r.IntN(len(letters))])
		}
	}
	return s.String()
}

// AMQP 1.0 section and performative descriptors (part 3 §3.2, part 2 §2.7).
const (
	descTransfer       = 0x14
	descHeader         = 0x70
	descMsgAnnotations = 0x72
	descProperties     = 0x73
	descAppProperties  = 0x74
	descData           = 0x75
	descValue          = 0x77
)

func (g *gen) transfer(r *rand.Rand, id uint32) {
	g.described(descTransfer, func() {
		g.list(7, func() {
			g.v(encode.AppendUint(g.b, 0))  // handle
			g.v(encode.AppendUint(g.b, id)) // delivery-id
			var tag [16]byte
			for i := range tag {
				tag[i] = byte(r.Uint32())
			}
			g.v(encode.AppendBinary(g.b, tag[:])) // delivery-tag
			g.v(encode.AppendUint(g.b, 0))        // message-format
			g.v(encode.AppendBool(g.b, false))    // settled
			g.v(encode.AppendBool(g.b, false))    // more
			g.v(encode.AppendNull(g.b))           // rcv-settle-mode
		})
	})
}

func (g *gen) header() {
	g.described(descHeader, func() {
		g.list(5, func() {
			g.v(encode.AppendBool(g.b, true))  // durable
			g.v(encode.AppendUbyte(g.b, 4))    // priority
			g.v(encode.AppendUint(g.b, 30000)) // ttl
			g.v(encode.AppendBool(g.b, false)) // first-acquirer
			g.v(encode.AppendUint(g.b, 0))     // delivery-count
		})
	})
}

func (g *gen) properties(r *rand.Rand, id int) {
	g.described(descProperties, func() {
		g.list(13, func() {
			g.v(encode.AppendString(g.b, fmt.Sprintf("ID:broker-%d:1:1:1-%d", r.IntN(100), id))) // message-id
			g.v(encode.AppendNull(g.b))                                                          // user-id
			g.v(encode.AppendString(g.b, "queue://orders."+word(r, 4, 12)))                      // to
			g.v(encode.AppendString(g.b, "order.created"))                                       // subject
			g.v(encode.AppendString(g.b, "queue://replies"))                                     // reply-to
			g.v(encode.AppendString(g.b, fmt.Sprintf("corr-%08x", r.Uint32())))                  // correlation-id
			g.v(encode.AppendSymbol(g.b, "application/json"))                                    // content-type
			g.v(encode.AppendNull(g.b))                                                          // content-encoding
			g.v(encode.AppendTimestamp(g.b, 1700000000000+int64(id)*1000))                       // absolute-expiry-time
			g.v(encode.AppendTimestamp(g.b, 1700000000000+int64(id)))                            // creation-time
			g.v(encode.AppendNull(g.b))                                                          // group-id
			g.v(encode.AppendUint(g.b, uint32(id)))                                              // group-sequence
			g.v(encode.AppendNull(g.b))                                                          // reply-to-group-id
		})
	})
}

func (g *gen) messageAnnotations(id int) {
	g.described(descMsgAnnotations, func() {
		g.dmap(4, func() {
			g.v(encode.AppendSymbol(g.b, "x-opt-jms-msg-type"))
			g.v(encode.AppendByte(g.b, 5))
			g.v(encode.AppendSymbol(g.b, "x-opt-jms-dest"))
			g.v(encode.AppendByte(g.b, 0))
			g.v(encode.AppendSymbol(g.b, "x-opt-enqueued-time"))
			g.v(encode.AppendTimestamp(g.b, 1700000000000+int64(id)))
			g.v(encode.AppendSymbol(g.b, "x-opt-sequence-number"))
			g.v(encode.AppendLong(g.b, int64(id)))
		})
	})
}

// mixed appends one value of a kind chosen by i: what maps and
// application properties hold.
func (g *gen) mixed(r *rand.Rand, i int) {
	switch i % 6 {
	case 0:
		g.v(encode.AppendString(g.b, word(r, 3, 24)))
	case 1:
		g.v(encode.AppendInt(g.b, r.Int32N(100000)))
	case 2:
		g.v(encode.AppendLong(g.b, r.Int64()))
	case 3:
		g.v(encode.AppendBool(g.b, r.IntN(2) == 0))
	case 4:
		g.v(encode.AppendTimestamp(g.b, 1700000000000+r.Int64N(1e9)))
	default:
		g.v(encode.AppendDouble(g.b, r.NormFloat64()))
	}
}

func (g *gen) appProperties(r *rand.Rand, pairs int) {
	g.described(descAppProperties, func() {
		g.dmap(pairs, func() {
			for i := range pairs {
				g.v(encode.AppendString(g.b, fmt.Sprintf("prop-%s-%d", word(r, 2, 8), i)))
				g.mixed(r, i)
			}
		})
	})
}

func (g *gen) data(r *rand.Rand, n int) {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	g.described(descData, func() { g.v(encode.AppendBinary(g.b, p)) })
}

// builtMessage returns a case of one message, sections one after another.
func builtMessage(name string, sections func(g *gen, r *rand.Rand)) benchCase {
	r := rand.New(rand.NewPCG(3, 4))
	var g gen
	sections(&g, r)
	return benchCase{name: name, inputs: [][]byte{g.b}, want: g.n}
}

// protonMessages returns the messages of testdata/proton/messages.jsonl
// whose size is below or from limit, and the values in them, counted
// from Proton's trace (each token but the …End ones is a value).
func protonMessages(tb testing.TB, small bool) (inputs [][]byte, values int) {
	const limit = 4 << 10
	for _, e := range corpus.Load(tb, "messages.jsonl") {
		if (len(e.Data) < limit) != small {
			continue
		}
		inputs = append(inputs, e.Data)
		for _, tok := range strings.Fields(e.Trace) {
			if !strings.HasPrefix(tok, "/") {
				values++
			}
		}
	}
	return inputs, values
}

func benchCases(tb testing.TB) []benchCase {
	cs := []benchCase{
		listOf("ints", func(g *gen, r *rand.Rand) {
			// Every magnitude, so both smallint and int appear.
			g.v(encode.AppendInt(g.b, r.Int32()>>r.IntN(32)))
		}),
		listOf("longs", func(g *gen, r *rand.Rand) {
			g.v(encode.AppendLong(g.b, r.Int64()>>r.IntN(64)))
		}),
		listOf("floats", func(g *gen, r *rand.Rand) {
			g.v(encode.AppendFloat(g.b, r.Float32()*1000))
		}),
		listOf("doubles", func(g *gen, r *rand.Rand) {
			g.v(encode.AppendDouble(g.b, r.NormFloat64()))
		}),
		listOf("booleans", func(g *gen, r *rand.Rand) {
			g.v(encode.AppendBool(g.b, r.IntN(2) == 0))
		}),
		listOf("binaries", func(g *gen, r *rand.Rand) {
			// 0 to 299 bytes: mostly vbin8, some vbin32.
			p := make([]byte, r.IntN(300))
			for i := range p {
				p[i] = byte(r.Uint32())
			}
			g.v(encode.AppendBinary(g.b, p))
		}),
		listOf("strings", func(g *gen, r *rand.Rand) {
			g.v(encode.AppendString(g.b, word(r, 4, 48)))
		}),
	}
	validated := cs[len(cs)-1]
	validated.name, validated.validate = "strings-validated", true
	cs = append(cs, validated)
	cs = append(cs, arrayOf("array-longs", amqpsax.CodeLong, func(r *rand.Rand) int64 { return r.Int64() })...)
	cs = append(cs, arrayOf("array-ints", amqpsax.CodeInt, func(r *rand.Rand) int64 { return int64(r.Int32()) })...)

	// A list of maps like application properties: string keys, mixed values.
	{
		r := rand.New(rand.NewPCG(5, 6))
		var g gen
		const maps, pairs = 50, 10
		g.list(maps, func() {
			for range maps {
				g.dmap(pairs, func() {
					for i := range pairs {
						g.v(encode.AppendString(g.b, fmt.Sprintf("key-%s-%d", word(r, 2, 10), i)))
						g.mixed(r, i)
					}
				})
			}
		})
		cs = append(cs, benchCase{name: "maps", inputs: [][]byte{g.b}, want: g.n})
	}

	// A list of records: transfer performatives and properties sections.
	{
		r := rand.New(rand.NewPCG(7, 8))
		var g gen
		const records = 100
		g.list(records, func() {
			for i := range records {
				if i%2 == 0 {
					g.transfer(r, uint32(i))
				} else {
					g.properties(r, i)
				}
			}
		})
		cs = append(cs, benchCase{name: "records", inputs: [][]byte{g.b}, want: g.n})
	}

	small, nSmall := protonMessages(tb, true)
	bulk, nBulk := protonMessages(tb, false)
	cs = append(cs,
		benchCase{name: "proton-messages", inputs: small, want: nSmall},
		benchCase{name: "proton-messages-bulk", inputs: bulk, want: nBulk},
		builtMessage("message-small", func(g *gen, r *rand.Rand) {
			g.header()
			g.properties(r, 1)
			g.appProperties(r, 3)
			g.data(r, 64)
		}),
		builtMessage("message-annotated", func(g *gen, r *rand.Rand) {
			g.header()
			g.messageAnnotations(7)
			g.properties(r, 7)
			g.appProperties(r, 20)
			g.described(descValue, func() {
				g.dmap(10, func() {
					for i := range 10 {
						g.v(encode.AppendString(g.b, word(r, 3, 12)))
						g.mixed(r, i)
					}
				})
			})
		}),
		builtMessage("message-data-64KiB", func(g *gen, r *rand.Rand) {
			g.header()
			g.properties(r, 2)
			g.data(r, 64<<10)
		}),
	)
	return cs
}
