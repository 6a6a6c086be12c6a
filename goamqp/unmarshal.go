package amqp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// decoder reads AMQP values into the Go values go-amqp v1.7.0 gives for
// them, with amqpsax's stream.Cursor: the cursor checks every size, count
// and constructor, the decoder picks the Go types. Move C to a value
// (Reset, Next), then call a reader; each reads the current value whole.
type decoder struct {
	C stream.Cursor

	// Set by Message.UnmarshalBinary (the zero values decode as the
	// other readers do): the strings and symbols in src[:strEnd], the
	// sections before the body, are slices of one copy of those bytes
	// (strs, made at the first string read there) rather than a copy
	// each; st is storage for what the Message points to, and data for
	// its first data section's slice, allocated with it (Receive's;
	// either may be nil); views makes binaries and strings views into
	// the input (Receive's, whose input is the Message's own, never
	// written: a binary's view ends with it, so no append reaches a
	// string's bytes) rather than copies.
	src    []byte
	strEnd int
	strs   string
	st     *received
	data   *[1][]byte
	views  bool
}

// decoders holds decoders for reuse: a decoder (its cursor) escapes to
// the heap in the readers' closures, and would cost an allocation per
// message.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

// getDecoder returns a decoder from the pool, as its zero value but for
// the cursor's storage.
func getDecoder() *decoder { return decoders.Get().(*decoder) }

// free drops what d refers to (the message's bytes and storage) and
// puts it back in the pool.
func (d *decoder) free() {
	d.C.Reset(nil)
	d.src, d.strEnd, d.strs, d.st, d.data, d.views = nil, 0, "", nil, nil, false
	decoders.Put(d)
}

// fault returns an error naming what was wanted at the current value.
func (d *decoder) fault(want string) error {
	if err := d.C.Err(); err != nil {
		return err
	}
	return fmt.Errorf("amqp: decode: %s wanted, %s (code %#02x) found at offset %d", want, d.C.Kind(), byte(d.C.Code()), d.C.Offset())
}

// done returns the cursor's error after a walk inside a compound, or nil.
func (d *decoder) done() error { return d.C.Err() }

// Bool reads a boolean (any of its three encodings).
func (d *decoder) Bool() (bool, error) {
	if d.C.Kind() != amqpsax.KindBool {
		return false, d.fault("boolean")
	}
	return d.C.Bool(), nil
}

// Ubyte reads a ubyte.
func (d *decoder) Ubyte() (uint8, error) {
	if d.C.Kind() != amqpsax.KindUbyte {
		return 0, d.fault("ubyte")
	}
	return uint8(d.C.Uint()), nil
}

// Uint32 reads a uint (uint0, smalluint or uint).
func (d *decoder) Uint32() (uint32, error) {
	if d.C.Kind() != amqpsax.KindUint {
		return 0, d.fault("uint")
	}
	return uint32(d.C.Uint()), nil
}

// Ulong reads a ulong (ulong0, smallulong or ulong).
func (d *decoder) Ulong() (uint64, error) {
	if d.C.Kind() != amqpsax.KindUlong {
		return 0, d.fault("ulong")
	}
	return d.C.Uint(), nil
}

// Unsigned reads any unsigned integer (ubyte, ushort, uint, ulong).
func (d *decoder) Unsigned() (uint64, error) {
	switch d.C.Kind() {
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		return d.C.Uint(), nil
	}
	return 0, d.fault("unsigned integer")
}

// Str reads a string or a symbol.
func (d *decoder) Str() (string, error) {
	switch d.C.Kind() {
	case amqpsax.KindString, amqpsax.KindSymbol:
		return d.str(), nil
	}
	return "", d.fault("string or symbol")
}

// str returns the text of the current string or symbol: with d.views
// its bytes in the input, else a slice of d.strs when it lies in
// src[:strEnd], else a copy of its own.
func (d *decoder) str() string {
	b := d.C.Bytes()
	if d.views {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	at := d.C.Offset() + len(d.C.Raw()) - len(b) // the text ends the value's bytes
	if len(b) == 0 || at < 0 || at+len(b) > d.strEnd {
		return string(b)
	}
	if d.strs == "" {
		d.strs = string(d.src[:d.strEnd])
	}
	return d.strs[at : at+len(b)]
}

// stringPtr returns a pointer to s: to a place in d.st's strings while
// one is free, else to one of its own.
func (d *decoder) stringPtr(s string) *string {
	if st := d.st; st != nil && int(st.nstrs) < len(st.strs) {
		p := &st.strs[st.nstrs]
		st.nstrs++
		*p = s
		return p
	}
	p := new(string)
	*p = s
	return p
}

// boxed returns s in an interface, as any(s) does, but with its header
// in a place of d.st's strings while one is free (stringAt) rather than
// in an allocation of its own.
func (d *decoder) boxed(s string) any {
	if st := d.st; st != nil && int(st.nstrs) < len(st.strs) {
		p := &st.strs[st.nstrs]
		st.nstrs++
		*p = s
		return stringAt(p)
	}
	return s
}

// stringAt returns the string *p in an interface whose data word is p
// itself, where any(*p) would copy the string's header to an allocation
// of its own. *p must not change afterwards: the interface's value is
// *p. This relies on the gc toolchain's layout of an interface (a type
// word, then a word pointing to the value when the type is not
// pointer-shaped, as a string is not), which reflect's packEface shares;
// TestStringAt checks it.
func stringAt(p *string) any {
	v := any("") // a constant: the type word, no allocation
	(*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] = unsafe.Pointer(p)
	return v
}

// maxKeys bounds the annotation keys kept in keys, and maxKeyLen their
// length.
const (
	maxKeys   = 256
	maxKeyLen = 64
)

// keys holds annotation keys (symbols: "x-opt-enqueued-time",
// "x-opt-partition-key" …, the same few on every message) already in an
// interface, so that a key seen before costs no allocation; copied on
// write, bounded by maxKeys (once full, new keys cost what they did).
var (
	keys   atomic.Pointer[map[string]any]
	keysMu sync.Mutex
)

// key reads the current string or symbol as an annotation key.
func (d *decoder) key() any {
	b := d.C.Bytes()
	m := keys.Load()
	if m != nil {
		if k, ok := (*m)[string(b)]; ok {
			return k
		}
	}
	if len(b) > maxKeyLen || (m != nil && len(*m) >= maxKeys) {
		return d.boxed(d.str())
	}
	s := string(b) // its own copy: kept for good, not a slice of d.strs
	keysMu.Lock()
	defer keysMu.Unlock()
	old := keys.Load()
	if old != nil {
		if k, ok := (*old)[s]; ok {
			return k
		}
		if len(*old) >= maxKeys {
			return s
		}
	}
	next := make(map[string]any, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	var k any = s
	next[s] = k
	keys.Store(&next)
	return k
}

func lenOf(m *map[string]any) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// Binary reads a binary, copied (with d.views, a view of the input whose
// capacity ends with it); an empty one is an empty, non-nil slice.
func (d *decoder) Binary() ([]byte, error) {
	if d.C.Kind() != amqpsax.KindBinary {
		return nil, d.fault("binary")
	}
	b := d.C.Bytes()
	if d.views && len(b) > 0 {
		return b[:len(b):len(b)], nil
	}
	return append([]byte{}, b...), nil
}

// Timestamp reads a timestamp, in the local time zone as go-amqp gives it.
func (d *decoder) Timestamp() (time.Time, error) {
	if d.C.Kind() != amqpsax.KindTimestamp {
		return time.Time{}, d.fault("timestamp")
	}
	return time.UnixMilli(d.C.Timestamp()), nil
}

// Any reads any value as go-amqp's ReadAny does: symbols as strings,
// lists as []any, maps as map[any]any or, when every key is a string or
// symbol, map[string]any, arrays as typed slices ([]int32, []string,
// []Symbol, []UUID, arrayUByte …), timestamps in the local time zone, and
// described values as *Error, the delivery states, lifetimePolicy or
// describedType by their descriptor. Decimals, chars, arrays of lists,
// arrays or described values, and map keys that are binaries, lists,
// maps or arrays are errors, as there.
func (d *decoder) Any() (any, error) {
	c := &d.C
	switch c.Kind() {
	case amqpsax.KindNull:
		return nil, nil
	case amqpsax.KindBool:
		return c.Bool(), nil
	case amqpsax.KindUbyte:
		return uint8(c.Uint()), nil
	case amqpsax.KindUshort:
		return uint16(c.Uint()), nil
	case amqpsax.KindUint:
		return uint32(c.Uint()), nil
	case amqpsax.KindUlong:
		return c.Uint(), nil
	case amqpsax.KindByte:
		return int8(c.Int()), nil
	case amqpsax.KindShort:
		return int16(c.Int()), nil
	case amqpsax.KindInt:
		return int32(c.Int()), nil
	case amqpsax.KindLong:
		return c.Int(), nil
	case amqpsax.KindFloat:
		return c.Float(), nil
	case amqpsax.KindDouble:
		return c.Double(), nil
	case amqpsax.KindTimestamp:
		return time.UnixMilli(c.Timestamp()), nil
	case amqpsax.KindUUID:
		return UUID(c.UUID()), nil
	case amqpsax.KindBinary:
		return d.Binary()
	case amqpsax.KindString, amqpsax.KindSymbol:
		return d.boxed(d.str()), nil
	case amqpsax.KindList:
		return d.List()
	case amqpsax.KindMap:
		m, err := d.anyMap()
		if err != nil {
			return nil, err
		}
		return stringKeyed(m), nil
	case amqpsax.KindArray:
		return d.array()
	case amqpsax.KindDescribed:
		return d.described()
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("amqp: decode: %s not implemented, at offset %d", c.Kind(), c.Offset())
}

// maxCount is go-amqp's bound on the elements of a list or array and the
// keys and values of a map.
const maxCount = 65536

// counted refuses, at the current list, map or array, what go-amqp's
// decoder refuses though the encoding allows it: more than maxCount
// elements, and an array that claims more elements than its size has
// bytes (go-amqp's bound, which an array of zero-width elements such as
// true or uint0 can pass in fact).
func (d *decoder) counted() error {
	c := &d.C
	n := c.Count()
	if c.Kind() == amqpsax.KindMap {
		n *= 2
	}
	if n > maxCount {
		return fmt.Errorf("amqp: decode: %s count %d exceeds maximum %d, at offset %d", c.Kind(), n, maxCount, c.Offset())
	}
	if c.Kind() != amqpsax.KindArray {
		return nil
	}
	raw := c.Raw()
	var size, countBytes int
	switch {
	case len(raw) >= 2 && raw[0] == byte(amqpsax.CodeArray8):
		size, countBytes = int(raw[1]), 1
	case len(raw) >= 5 && raw[0] == byte(amqpsax.CodeArray32):
		size, countBytes = int(binary.BigEndian.Uint32(raw[1:5])), 4
	default:
		return nil // an array inside an array: refused as such
	}
	if n > size-countBytes {
		return fmt.Errorf("amqp: decode: array count %d exceeds body length %d, at offset %d", n, size-countBytes, c.Offset())
	}
	return nil
}

// List reads a list as []any; an empty list is a nil []any.
func (d *decoder) List() ([]any, error) {
	c := &d.C
	if c.Kind() != amqpsax.KindList {
		return nil, d.fault("list")
	}
	if err := d.counted(); err != nil {
		return nil, err
	}
	return eachOf(d, d.Any)
}

// eachOf reads the elements of the list or array the cursor is at with
// read, one each, into a slice of its count (nil when empty).
func eachOf[T any](d *decoder, read func() (T, error)) ([]T, error) {
	c := &d.C
	var out []T
	if n := c.Count(); n > 0 {
		out = make([]T, 0, n)
	}
	c.Enter()
	for c.Next() {
		v, err := read()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	c.Exit()
	return out, nil
}

// anyMap reads a map as map[any]any, a later key replacing an earlier
// equal one as go-amqp's does.
func (d *decoder) anyMap() (map[any]any, error) {
	c := &d.C
	if c.Kind() != amqpsax.KindMap {
		return nil, d.fault("map")
	}
	if err := d.counted(); err != nil {
		return nil, err
	}
	out := make(map[any]any, c.Count())
	c.Enter()
	for c.Next() {
		var k any
		var err error
		if kind := c.Kind(); kind == amqpsax.KindSymbol || kind == amqpsax.KindString {
			k = d.key()
		} else if k, err = d.Any(); err != nil {
			return nil, err
		}
		if !c.Next() {
			break
		}
		v, err := d.Any()
		if err != nil {
			return nil, err
		}
		if !hashable(k) {
			return nil, fmt.Errorf("amqp: decode: invalid map key %T at offset %d", k, c.Offset())
		}
		out[k] = v
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	c.Exit()
	return out, nil
}

// hashable reports whether k can key a Go map: go-amqp refuses slices
// and maps as keys, and would panic on a describedType that holds one;
// this refuses both.
func hashable(k any) bool {
	switch k.(type) {
	case nil, string, int64, uint64, int32, uint32, bool:
		return true
	}
	return reflect.TypeOf(k).Comparable() && comparableValue(reflect.ValueOf(k))
}

func comparableValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.Func:
		return false
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return true
		}
		if v.Kind() == reflect.Pointer {
			return true // compared by address
		}
		return comparableValue(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if !comparableValue(v.Field(i)) {
				return false
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if !comparableValue(v.Index(i)) {
				return false
			}
		}
	}
	return true
}

// stringKeyed returns m as a map[string]any when it has keys and every
// key is a string, as go-amqp's ReadAny does.
func stringKeyed(m map[any]any) any {
	if len(m) == 0 {
		return m
	}
	for k := range m {
		if _, ok := k.(string); !ok {
			return m
		}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k.(string)] = v
	}
	return out
}

// Annotations reads a map as Annotations (keys of any type).
func (d *decoder) Annotations() (Annotations, error) {
	m, err := d.anyMap()
	return Annotations(m), err
}

// StringMap reads a map whose keys are strings or symbols.
func (d *decoder) StringMap() (map[string]any, error) {
	c := &d.C
	if c.Kind() != amqpsax.KindMap {
		return nil, d.fault("map")
	}
	if err := d.counted(); err != nil {
		return nil, err
	}
	out := make(map[string]any, c.Count())
	c.Enter()
	for c.Next() {
		k, err := d.Str()
		if err != nil {
			return nil, err
		}
		if !c.Next() {
			break
		}
		v, err := d.Any()
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	c.Exit()
	return out, nil
}

// elems calls f for each element of the current array, then leaves it.
func (d *decoder) elems(f func(i int)) error {
	c := &d.C
	c.Enter()
	for i := 0; c.Next(); i++ {
		f(i)
	}
	if err := d.done(); err != nil {
		return err
	}
	c.Exit()
	return nil
}

// typedArray reads an array's elements with get into a []T, nil when the
// array is empty, as go-amqp gives it.
func typedArray[T any](d *decoder, get func(*stream.Cursor) T) (any, error) {
	var out []T
	if n := d.C.Count(); n > 0 {
		out = make([]T, n)
	}
	err := d.elems(func(i int) {
		if i < len(out) {
			out[i] = get(&d.C)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d *decoder) array() (any, error) {
	c := &d.C
	if err := d.counted(); err != nil {
		return nil, err
	}
	if c.ElemKind() == amqpsax.KindDescribed {
		return nil, fmt.Errorf("amqp: decode: array decoding not implemented for described elements, at offset %d", c.Offset())
	}
	switch c.ElemKind() {
	case amqpsax.KindByte:
		return typedArray(d, func(c *stream.Cursor) int8 { return int8(c.Int()) })
	case amqpsax.KindUbyte:
		v, err := typedArray(d, func(c *stream.Cursor) uint8 { return uint8(c.Uint()) })
		if err != nil {
			return nil, err
		}
		return arrayUByte(v.([]uint8)), nil
	case amqpsax.KindUshort:
		return typedArray(d, func(c *stream.Cursor) uint16 { return uint16(c.Uint()) })
	case amqpsax.KindShort:
		return typedArray(d, func(c *stream.Cursor) int16 { return int16(c.Int()) })
	case amqpsax.KindUint:
		return typedArray(d, func(c *stream.Cursor) uint32 { return uint32(c.Uint()) })
	case amqpsax.KindInt:
		return typedArray(d, func(c *stream.Cursor) int32 { return int32(c.Int()) })
	case amqpsax.KindUlong:
		return typedArray(d, func(c *stream.Cursor) uint64 { return c.Uint() })
	case amqpsax.KindLong:
		return typedArray(d, func(c *stream.Cursor) int64 { return c.Int() })
	case amqpsax.KindFloat:
		return typedArray(d, func(c *stream.Cursor) float32 { return c.Float() })
	case amqpsax.KindDouble:
		return typedArray(d, func(c *stream.Cursor) float64 { return c.Double() })
	case amqpsax.KindBool:
		return typedArray(d, func(c *stream.Cursor) bool { return c.Bool() })
	case amqpsax.KindString:
		return typedArray(d, func(c *stream.Cursor) string { return string(c.Bytes()) })
	case amqpsax.KindSymbol:
		return typedArray(d, func(c *stream.Cursor) Symbol { return Symbol(c.Bytes()) })
	case amqpsax.KindBinary:
		return typedArray(d, func(c *stream.Cursor) []byte { return append([]byte(nil), c.Bytes()...) })
	case amqpsax.KindTimestamp:
		// go-amqp gives an array's timestamps in UTC, a single one in
		// the local zone.
		return typedArray(d, func(c *stream.Cursor) time.Time { return time.UnixMilli(c.Timestamp()).UTC() })
	case amqpsax.KindUUID:
		return typedArray(d, func(c *stream.Cursor) UUID { return UUID(c.UUID()) })
	case amqpsax.KindMap:
		out, err := eachOf(d, d.anyMap)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("amqp: decode: array decoding not implemented for %s elements, at offset %d", c.ElemKind(), c.Offset())
}

// descriptorCode returns the code go-amqp reads a described value by: a
// smallulong or ulong descriptor's number, else 0.
func (d *decoder) descriptorCode() (uint64, error) {
	c := &d.C
	if !c.Next() {
		if err := c.Err(); err != nil {
			return 0, err
		}
		return 0, errors.New("amqp: decode: described value without descriptor")
	}
	switch c.Code() {
	case amqpsax.CodeSmallUlong, amqpsax.CodeUlong:
		return c.Uint(), nil
	}
	return 0, nil
}

func (d *decoder) described() (any, error) {
	c := &d.C
	at := c.Offset()
	c.Enter()
	code, err := d.descriptorCode()
	if err != nil {
		return nil, err
	}
	var v any
	switch code {
	case codeError:
		e := new(Error)
		err, v = d.errorFields(e), e
	case uint64(deleteOnClose), uint64(deleteOnNoLinks), uint64(deleteOnNoMessages), uint64(deleteOnNoLinksOrMessages):
		err, v = d.Fields(0, nil), lifetimePolicy(code)
	case codeAccepted:
		err, v = d.Fields(0, nil), new(StateAccepted)
	case codeReleased:
		err, v = d.Fields(0, nil), new(StateReleased)
	case codeReceived:
		s := new(StateReceived)
		err, v = d.receivedFields(s), s
	case codeRejected:
		s := new(StateRejected)
		err, v = d.rejectedFields(s), s
	case codeModified:
		s := new(StateModified)
		err, v = d.modifiedFields(s), s
	case 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x28, 0x29,
		0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x40, 0x41, 0x42, 0x43, 0x44:
		return nil, fmt.Errorf("amqp: decode: described value %#02x (a performative, section or SASL frame) not implemented, at offset %d", code, at)
	default:
		var t describedType
		if t.Descriptor, err = d.Any(); err != nil {
			return nil, err
		}
		if !c.Next() {
			if err := c.Err(); err != nil {
				return nil, err
			}
			return nil, errors.New("amqp: decode: described value without value")
		}
		if t.Value, err = d.Any(); err != nil {
			return nil, err
		}
		v = t
	}
	if err != nil {
		return nil, err
	}
	c.Exit()
	return v, nil
}

// Fields reads the value of a composite, the current value after its
// descriptor: a list of at most max fields, f called with the cursor on
// each field that is not null (f may be nil when max is 0). The fields
// the list leaves out, and null ones, are left to the caller.
func (d *decoder) Fields(max int, f func(i int) error) error {
	c := &d.C
	if !c.Next() {
		if err := c.Err(); err != nil {
			return err
		}
		return errors.New("amqp: decode: described value without value")
	}
	if c.Kind() != amqpsax.KindList {
		return d.fault("list of fields")
	}
	if n := c.Count(); n > max {
		return fmt.Errorf("amqp: decode: invalid field count %d at offset %d", n, c.Offset())
	}
	c.Enter()
	for i := 0; c.Next(); i++ {
		if c.IsNull() {
			continue
		}
		if err := f(i); err != nil {
			return err
		}
	}
	if err := d.done(); err != nil {
		return err
	}
	c.Exit()
	return nil
}

// Composite reads the current value as a composite with descriptor code
// (a ulong): Fields after the descriptor.
func (d *decoder) Composite(code uint64, max int, f func(i int) error) error {
	return d.describedAs(code, func() error { return d.Fields(max, f) })
}

func (d *decoder) errorFields(e *Error) error {
	var cond bool
	err := d.Fields(3, func(i int) error {
		var err error
		switch i {
		case 0:
			var s string
			s, err = d.Str()
			e.Condition, cond = ErrCond(s), true
		case 1:
			e.Description, err = d.Str()
		case 2:
			e.Info, err = d.StringMap()
		}
		return err
	})
	if err == nil && !cond {
		err = errors.New("amqp: decode: Error.Condition is required")
	}
	return err
}

func (d *decoder) receivedFields(s *StateReceived) error {
	var have [2]bool
	err := d.Fields(2, func(i int) error {
		var err error
		if i == 0 {
			s.SectionNumber, err = d.Uint32()
		} else {
			s.SectionOffset, err = d.Ulong()
		}
		have[i] = true
		return err
	})
	if err == nil && !(have[0] && have[1]) {
		err = errors.New("amqp: decode: StateReceived needs its section-number and section-offset")
	}
	return err
}

func (d *decoder) rejectedFields(s *StateRejected) error {
	return d.Fields(1, func(int) error {
		e := new(Error)
		if err := d.describedAs(codeError, func() error { return d.errorFields(e) }); err != nil {
			return err
		}
		s.Error = e
		return nil
	})
}

func (d *decoder) modifiedFields(s *StateModified) error {
	return d.Fields(3, func(i int) error {
		var err error
		switch i {
		case 0:
			s.DeliveryFailed, err = d.Bool()
		case 1:
			s.UndeliverableHere, err = d.Bool()
		case 2:
			s.MessageAnnotations, err = d.Annotations()
		}
		return err
	})
}

// unmarshalFrom reads one value from the unread bytes of r into v, which is one
// of this package's types or a pointer to a Go value Any gives, and moves
// r past it.
func unmarshalFrom(r *buffer, v any) error {
	var d decoder
	d.C.Reset(r.Bytes())
	if !d.C.Next() {
		if err := d.C.Err(); err != nil {
			return err
		}
		return errors.New("amqp: decode: no value")
	}
	at := d.C.Offset()
	raw := len(d.C.Raw())
	if d.C.IsNull() {
		r.Skip(at + raw)
		return nil
	}
	var err error
	switch t := v.(type) {
	case *uint8:
		*t, err = d.Ubyte()
	case *uint32:
		*t, err = d.Uint32()
	case *Symbol:
		var s string
		s, err = d.Str()
		*t = Symbol(s)
	case *UUID:
		if d.C.Kind() != amqpsax.KindUUID {
			err = d.fault("uuid")
		} else {
			*t = UUID(d.C.UUID())
		}
	case *Annotations:
		*t, err = d.Annotations()
	case *arrayUByte:
		if d.C.ElemKind() != amqpsax.KindUbyte {
			err = d.fault("array of ubyte")
			break
		}
		var a any
		if a, err = d.array(); err == nil {
			*t = a.(arrayUByte)
		}
	case *describedType:
		if d.C.Kind() != amqpsax.KindDescribed {
			err = d.fault("described value")
			break
		}
		d.C.Enter()
		d.C.Next()
		if t.Descriptor, err = d.Any(); err == nil {
			if d.C.Next() {
				t.Value, err = d.Any()
			}
			if err == nil {
				err = d.C.Err()
			}
		}
	case *Error:
		err = d.describedAs(codeError, func() error { return d.errorFields(t) })
	case *StateReceived:
		err = d.describedAs(codeReceived, func() error { return d.receivedFields(t) })
	case *StateAccepted:
		err = d.describedAs(codeAccepted, func() error { return d.Fields(0, nil) })
	case *StateRejected:
		err = d.describedAs(codeRejected, func() error { return d.rejectedFields(t) })
	case *StateReleased:
		err = d.describedAs(codeReleased, func() error { return d.Fields(0, nil) })
	case *StateModified:
		err = d.describedAs(codeModified, func() error { return d.modifiedFields(t) })
	default:
		err = fmt.Errorf("unable to unmarshal %T", v)
	}
	if err != nil {
		return err
	}
	r.Skip(at + raw)
	return nil
}

func (d *decoder) describedAs(code uint64, fields func() error) error {
	c := &d.C
	if c.Kind() != amqpsax.KindDescribed {
		return d.fault("described value")
	}
	at := c.Offset()
	c.Enter()
	got, err := d.descriptorCode()
	if err != nil {
		return err
	}
	if got != code {
		return fmt.Errorf("amqp: decode: descriptor %#x found where %#x was wanted, at offset %d", got, code, at)
	}
	if err := fields(); err != nil {
		return err
	}
	c.Exit()
	return nil
}
