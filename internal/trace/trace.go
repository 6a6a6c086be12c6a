// Package trace writes and reads the event traces the tests of every
// package compare: one token per Handler event, separated by single
// spaces, in wire order. The format is shared with the corpus generator
// of testdata/proton (see its README.md):
//
//	null  bool:true  ubyte:N ushort:N uint:N ulong:N byte:N short:N int:N long:N
//	float:XXXXXXXX (binary32 bits)  double:XXXXXXXXXXXXXXXX (binary64 bits)
//	decimal32:HEX decimal64:HEX decimal128:HEX  char:N  timestamp:N  uuid:canonical
//	binary:HEX string:HEX symbol:HEX
//	list:N … /list   map:PAIRS … /map   array:N:KIND … /array   described … /described
package trace

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/amqpsax/amqpsax"
	"github.com/google/uuid"
)

// Recorder is a Handler that records every event as a trace token.
type Recorder struct {
	b []byte
}

// String returns the trace recorded since the last Reset.
func (r *Recorder) String() string { return string(r.b) }

// Reset forgets the recorded trace, keeping the buffer.
func (r *Recorder) Reset() { r.b = r.b[:0] }

func (r *Recorder) tok(s string) {
	if len(r.b) > 0 {
		r.b = append(r.b, ' ')
	}
	r.b = append(r.b, s...)
}

func (r *Recorder) num(name string, v int64) error {
	r.tok(name)
	r.b = strconv.AppendInt(append(r.b, ':'), v, 10)
	return nil
}

func (r *Recorder) unum(name string, v uint64) error {
	r.tok(name)
	r.b = strconv.AppendUint(append(r.b, ':'), v, 10)
	return nil
}

func (r *Recorder) hex(name string, v []byte) error {
	r.tok(name)
	r.b = hex.AppendEncode(append(r.b, ':'), v)
	return nil
}

func (r *Recorder) OnNull() error { r.tok("null"); return nil }
func (r *Recorder) OnBool(v bool) error {
	r.tok("bool:" + strconv.FormatBool(v))
	return nil
}
func (r *Recorder) OnUbyte(v uint8) error     { return r.unum("ubyte", uint64(v)) }
func (r *Recorder) OnUshort(v uint16) error   { return r.unum("ushort", uint64(v)) }
func (r *Recorder) OnUint(v uint32) error     { return r.unum("uint", uint64(v)) }
func (r *Recorder) OnUlong(v uint64) error    { return r.unum("ulong", v) }
func (r *Recorder) OnByte(v int8) error       { return r.num("byte", int64(v)) }
func (r *Recorder) OnShort(v int16) error     { return r.num("short", int64(v)) }
func (r *Recorder) OnInt(v int32) error       { return r.num("int", int64(v)) }
func (r *Recorder) OnLong(v int64) error      { return r.num("long", v) }
func (r *Recorder) OnTimestamp(v int64) error { return r.num("timestamp", v) }
func (r *Recorder) OnChar(v rune) error       { return r.unum("char", uint64(uint32(v))) }
func (r *Recorder) OnFloat(v float32) error {
	r.tok(fmt.Sprintf("float:%08x", math.Float32bits(v)))
	return nil
}
func (r *Recorder) OnDouble(v float64) error {
	r.tok(fmt.Sprintf("double:%016x", math.Float64bits(v)))
	return nil
}
func (r *Recorder) OnDecimal32(v amqpsax.Decimal32) error   { return r.hex("decimal32", v[:]) }
func (r *Recorder) OnDecimal64(v amqpsax.Decimal64) error   { return r.hex("decimal64", v[:]) }
func (r *Recorder) OnDecimal128(v amqpsax.Decimal128) error { return r.hex("decimal128", v[:]) }
func (r *Recorder) OnUUID(v uuid.UUID) error                { r.tok("uuid:" + v.String()); return nil }
func (r *Recorder) OnBinary(v []byte) error                 { return r.hex("binary", v) }
func (r *Recorder) OnString(v []byte) error                 { return r.hex("string", v) }
func (r *Recorder) OnSymbol(v []byte) error                 { return r.hex("symbol", v) }
func (r *Recorder) OnListStart(n int) error                 { return r.num("list", int64(n)) }
func (r *Recorder) OnListEnd() error                        { r.tok("/list"); return nil }
func (r *Recorder) OnMapStart(n int) error                  { return r.num("map", int64(n)) }
func (r *Recorder) OnMapEnd() error                         { r.tok("/map"); return nil }
func (r *Recorder) OnArrayStart(n int, k amqpsax.Kind) error {
	r.num("array", int64(n))
	r.b = append(append(r.b, ':'), k.String()...)
	return nil
}
func (r *Recorder) OnArrayEnd() error       { r.tok("/array"); return nil }
func (r *Recorder) OnDescribedStart() error { r.tok("described"); return nil }
func (r *Recorder) OnDescribedEnd() error   { r.tok("/described"); return nil }

var _ amqpsax.Handler = (*Recorder)(nil)

var kindByName = func() map[string]amqpsax.Kind {
	m := map[string]amqpsax.Kind{}
	for k := amqpsax.KindNull; k <= amqpsax.KindDescribed; k++ {
		m[k.String()] = k
	}
	return m
}()

// Replay sends the events of trace to h, in order. It stops at the first
// error h returns, or at a token it cannot parse.
func Replay(trace string, h amqpsax.Handler) error {
	for _, tok := range strings.Fields(trace) {
		name, arg, _ := strings.Cut(tok, ":")
		if err := replayOne(h, name, arg); err != nil {
			return fmt.Errorf("token %q: %w", tok, err)
		}
	}
	return nil
}

func replayOne(h amqpsax.Handler, name, arg string) error {
	u := func(bits int) uint64 { v, _ := strconv.ParseUint(arg, 10, bits); return v }
	i := func(bits int) int64 { v, _ := strconv.ParseInt(arg, 10, bits); return v }
	x := func(bits int) uint64 { v, _ := strconv.ParseUint(arg, 16, bits); return v }
	raw := func() []byte { b, _ := hex.DecodeString(arg); return b }
	switch name {
	case "null":
		return h.OnNull()
	case "bool":
		return h.OnBool(arg == "true")
	case "ubyte":
		return h.OnUbyte(uint8(u(8)))
	case "ushort":
		return h.OnUshort(uint16(u(16)))
	case "uint":
		return h.OnUint(uint32(u(32)))
	case "ulong":
		return h.OnUlong(u(64))
	case "byte":
		return h.OnByte(int8(i(8)))
	case "short":
		return h.OnShort(int16(i(16)))
	case "int":
		return h.OnInt(int32(i(32)))
	case "long":
		return h.OnLong(i(64))
	case "float":
		return h.OnFloat(math.Float32frombits(uint32(x(32))))
	case "double":
		return h.OnDouble(math.Float64frombits(x(64)))
	case "decimal32":
		return h.OnDecimal32(amqpsax.Decimal32(raw()))
	case "decimal64":
		return h.OnDecimal64(amqpsax.Decimal64(raw()))
	case "decimal128":
		return h.OnDecimal128(amqpsax.Decimal128(raw()))
	case "char":
		return h.OnChar(rune(u(32)))
	case "timestamp":
		return h.OnTimestamp(i(64))
	case "uuid":
		id, err := uuid.Parse(arg)
		if err != nil {
			return err
		}
		return h.OnUUID(id)
	case "binary":
		return h.OnBinary(raw())
	case "string":
		return h.OnString(raw())
	case "symbol":
		return h.OnSymbol(raw())
	case "list":
		return h.OnListStart(int(i(64)))
	case "/list":
		return h.OnListEnd()
	case "map":
		return h.OnMapStart(int(i(64)))
	case "/map":
		return h.OnMapEnd()
	case "array":
		n, kind, _ := strings.Cut(arg, ":")
		cnt, _ := strconv.Atoi(n)
		k, ok := kindByName[kind]
		if !ok {
			return fmt.Errorf("unknown kind %q", kind)
		}
		return h.OnArrayStart(cnt, k)
	case "/array":
		return h.OnArrayEnd()
	case "described":
		return h.OnDescribedStart()
	case "/described":
		return h.OnDescribedEnd()
	}
	return fmt.Errorf("unknown token")
}
