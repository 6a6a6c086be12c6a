package bench

import (
	"github.com/amqpsax/amqpsax"
	"github.com/google/uuid"
)

// keeper is a dispatch Handler that keeps every value as a Go value, the
// way a user turning messages into objects would write it: strings and
// binaries copied, numbers boxed in any, lists as []any, maps as
// map[string]any (map[any]any when a key is not a string), arrays of long
// as []int64 (through BatchHandler), arrays of string as []string, other
// arrays as []any, described values as Kept. It builds the same kind of
// tree go-amqp's Message.UnmarshalBinary does, so decode/impl=dispatch-keep
// against decode/impl=goamqp compares like with like.
type keeper struct {
	stack []kframe
	root  []any
}

// Kept is a described value the keeper built.
type Kept struct{ Descriptor, Value any }

type kframe struct {
	kind    amqpsax.Kind // list, map, array or described
	elem    amqpsax.Kind // arrays: the element kind
	vals    []any        // list and other arrays: kept; map, described: scratch
	strs    []string     // arrays of string
	longs   []int64      // arrays of long
	scratch []any        // reused between messages for maps and described values
	keys    []string     // maps: string and symbol keys, reused
}

// Map keys that are strings or symbols are kept unboxed in kframe.keys,
// with one of these marks in their place in vals, so that a map with
// string keys becomes a map[string]any without boxing each key first.
var strKey, symKey any = new(byte), new(int16)

// mapKey returns the innermost frame when it is a map expecting a key.
func (k *keeper) mapKey() *kframe {
	if n := len(k.stack); n > 0 {
		if f := &k.stack[n-1]; f.kind == amqpsax.KindMap && len(f.vals)%2 == 0 {
			return f
		}
	}
	return nil
}

var (
	_ amqpsax.Handler      = (*keeper)(nil)
	_ amqpsax.BatchHandler = (*keeper)(nil)
)

func (k *keeper) reset() {
	k.stack = k.stack[:0]
	k.root = nil
}

// open pushes a frame, reusing the slot's scratch storage.
func (k *keeper) open(kind amqpsax.Kind) *kframe {
	if len(k.stack) < cap(k.stack) {
		k.stack = k.stack[:len(k.stack)+1]
	} else {
		k.stack = append(k.stack, kframe{})
	}
	f := &k.stack[len(k.stack)-1]
	f.kind, f.elem, f.vals, f.strs, f.longs = kind, 0, nil, nil, nil
	return f
}

func (k *keeper) close() *kframe {
	f := &k.stack[len(k.stack)-1]
	k.stack = k.stack[:len(k.stack)-1]
	return f
}

// capped bounds a count that came off the wire before it sizes an
// allocation.
func capped(n int) int { return min(n, 1<<16) }

func (k *keeper) push(v any) error {
	if n := len(k.stack); n > 0 {
		f := &k.stack[n-1]
		f.vals = append(f.vals, v)
	} else {
		k.root = append(k.root, v)
	}
	return nil
}

func (k *keeper) OnNull() error                           { return k.push(nil) }
func (k *keeper) OnBool(v bool) error                     { return k.push(v) }
func (k *keeper) OnUbyte(v uint8) error                   { return k.push(v) }
func (k *keeper) OnUshort(v uint16) error                 { return k.push(v) }
func (k *keeper) OnUint(v uint32) error                   { return k.push(v) }
func (k *keeper) OnUlong(v uint64) error                  { return k.push(v) }
func (k *keeper) OnByte(v int8) error                     { return k.push(v) }
func (k *keeper) OnShort(v int16) error                   { return k.push(v) }
func (k *keeper) OnInt(v int32) error                     { return k.push(v) }
func (k *keeper) OnLong(v int64) error                    { return k.push(v) }
func (k *keeper) OnFloat(v float32) error                 { return k.push(v) }
func (k *keeper) OnDouble(v float64) error                { return k.push(v) }
func (k *keeper) OnDecimal32(v amqpsax.Decimal32) error   { return k.push(v) }
func (k *keeper) OnDecimal64(v amqpsax.Decimal64) error   { return k.push(v) }
func (k *keeper) OnDecimal128(v amqpsax.Decimal128) error { return k.push(v) }
func (k *keeper) OnChar(v rune) error                     { return k.push(v) }
func (k *keeper) OnTimestamp(ms int64) error              { return k.push(Timestamp(ms)) }
func (k *keeper) OnUUID(v uuid.UUID) error                { return k.push(v) }
func (k *keeper) OnBinary(v []byte) error                 { return k.push(append([]byte(nil), v...)) }

func (k *keeper) OnSymbol(v []byte) error {
	if f := k.mapKey(); f != nil {
		f.keys = append(f.keys, string(v))
		f.vals = append(f.vals, symKey)
		return nil
	}
	return k.push(Symbol(v))
}

func (k *keeper) OnString(v []byte) error {
	if f := k.mapKey(); f != nil {
		f.keys = append(f.keys, string(v))
		f.vals = append(f.vals, strKey)
		return nil
	}
	if n := len(k.stack); n > 0 && k.stack[n-1].elem == amqpsax.KindString {
		f := &k.stack[n-1]
		f.strs = append(f.strs, string(v))
		return nil
	}
	return k.push(string(v))
}

func (k *keeper) OnListStart(count int) error {
	k.open(amqpsax.KindList).vals = make([]any, 0, capped(count))
	return nil
}

func (k *keeper) OnListEnd() error { return k.push(k.close().vals) }

func (k *keeper) OnMapStart(pairs int) error {
	f := k.open(amqpsax.KindMap)
	f.vals = f.scratch[:0]
	f.keys = f.keys[:0]
	return nil
}

func (k *keeper) OnMapEnd() error {
	f := k.close()
	f.scratch = f.vals
	kv, keys := f.vals, f.keys
	strKeys := true
	for i := 0; i < len(kv); i += 2 {
		if kv[i] != strKey {
			strKeys = false
			break
		}
	}
	var m any
	if strKeys {
		sm := make(map[string]any, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			sm[keys[i/2]] = kv[i+1]
		}
		m = sm
	} else {
		am := make(map[any]any, len(kv)/2)
		j := 0
		for i := 0; i < len(kv); i += 2 {
			key := kv[i]
			switch key {
			case strKey:
				key = keys[j]
				j++
			case symKey:
				key = Symbol(keys[j])
				j++
			}
			am[key] = kv[i+1]
		}
		m = am
	}
	clear(kv)
	clear(keys)
	return k.push(m)
}

func (k *keeper) OnArrayStart(count int, elem amqpsax.Kind) error {
	f := k.open(amqpsax.KindArray)
	f.elem = elem
	switch elem {
	case amqpsax.KindString:
		f.strs = make([]string, 0, capped(count))
	case amqpsax.KindLong:
		f.longs = make([]int64, 0, capped(count))
	default:
		f.vals = make([]any, 0, capped(count))
	}
	return nil
}

func (k *keeper) OnArrayEnd() error {
	f := k.close()
	switch f.elem {
	case amqpsax.KindString:
		return k.push(f.strs)
	case amqpsax.KindLong:
		return k.push(f.longs)
	}
	return k.push(f.vals)
}

func (k *keeper) OnDescribedStart() error {
	f := k.open(amqpsax.KindDescribed)
	f.vals = f.scratch[:0]
	return nil
}

func (k *keeper) OnDescribedEnd() error {
	f := k.close()
	f.scratch = f.vals
	d := Kept{f.vals[0], f.vals[1]}
	clear(f.vals)
	return k.push(d)
}

// Batches: arrays of long are kept as []int64; other numeric arrays
// element by element, boxed.

func (k *keeper) OnLongArray(v []int64) error {
	f := &k.stack[len(k.stack)-1]
	f.longs = append(f.longs, v...)
	return nil
}

func boxAll[T any](k *keeper, v []T) error {
	f := &k.stack[len(k.stack)-1]
	for _, e := range v {
		f.vals = append(f.vals, e)
	}
	return nil
}

func (k *keeper) OnBoolArray(v []bool) error        { return boxAll(k, v) }
func (k *keeper) OnUbyteArray(v []uint8) error      { return boxAll(k, v) }
func (k *keeper) OnUshortArray(v []uint16) error    { return boxAll(k, v) }
func (k *keeper) OnUintArray(v []uint32) error      { return boxAll(k, v) }
func (k *keeper) OnUlongArray(v []uint64) error     { return boxAll(k, v) }
func (k *keeper) OnByteArray(v []int8) error        { return boxAll(k, v) }
func (k *keeper) OnShortArray(v []int16) error      { return boxAll(k, v) }
func (k *keeper) OnIntArray(v []int32) error        { return boxAll(k, v) }
func (k *keeper) OnFloatArray(v []float32) error    { return boxAll(k, v) }
func (k *keeper) OnDoubleArray(v []float64) error   { return boxAll(k, v) }
func (k *keeper) OnCharArray(v []rune) error        { return boxAll(k, v) }
func (k *keeper) OnTimestampArray(ms []int64) error { return boxAll(k, ms) }
