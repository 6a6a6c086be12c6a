package main

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/google/uuid"
)

// Filter is a streaming filter over an AMQP message: a Handler that
// passes the events of a message on to an *encode.Writer, and on the way
// adds one message annotation and drops one application property. Decode
// a message into it with package dispatch, call Finish, and the Writer
// holds the filtered message:
//
//	f := Filter{W: &w, AnnotationKey: "x-opt-routed-by", AnnotationValue: "amqpsax", DropProperty: "secret"}
//	err := d.DecodeAll(msg, &f)
//	if err == nil { err = f.Finish() }
//	out := w.Bytes()
//
// A message is a sequence of sections, each a described value (AMQP 1.0
// part 3 §3.2): header (descriptor 0x70), delivery-annotations (0x71),
// message-annotations (0x72), properties (0x73), application-properties
// (0x74), the body (0x75 data, 0x76 amqp-sequence or 0x77 amqp-value), and
// footer (0x78), in that order, each optional. The annotation goes into the
// message-annotations map when there is one (replacing an annotation of
// the same key, as keys are unique); when there is none, Filter inserts a
// message-annotations section where it belongs: before the first section
// that must follow it, or at the end (Finish) if none does. A section's
// descriptor may be a ulong (as usual) or its symbolic name
// ("amqp:properties:list").
//
// Filter sees each section's descriptor only after the section has begun,
// so it holds back the start event of every top-level described value
// until its descriptor arrives and tells which section it is.
//
// The Writer writes every value in its smallest encoding, so the sections
// Filter does not touch are re-encoded equal in value, not necessarily in
// bytes.
type Filter struct {
	W               *encode.Writer // receives the filtered events
	AnnotationKey   string         // symbol key of the message annotation to add
	AnnotationValue string         // its value, a string
	DropProperty    string         // key of the application property to drop

	depth     int                // lists, maps, arrays and described values open in the input
	held      bool               // a section's start event is held until its descriptor
	section   amqpsax.Descriptor // the section being read; 0 between sections or in one unknown
	annotated bool               // the annotation has been written
	inMap     bool               // reading the map of the message- or application-properties section
	index     int                // values read so far in that map: keys are even, values odd
	drop      bool               // the next value is the value of a dropped key
}

// Finish ends the filtered message: it writes a message-annotations
// section holding the annotation if the message had no section that the
// annotation could go in or before. Call it once, after decoding.
func (f *Filter) Finish() error {
	if f.annotated {
		return nil
	}
	return f.writeSection()
}

// writeSection writes a message-annotations section holding the annotation.
func (f *Filter) writeSection() error {
	f.annotated = true
	w := f.W
	if err := w.OnDescribedStart(); err != nil {
		return err
	}
	if err := w.OnUlong(uint64(amqpsax.DescriptorMessageAnnotations)); err != nil {
		return err
	}
	if err := f.writeMap(); err != nil {
		return err
	}
	return w.OnDescribedEnd()
}

// writeMap writes a map holding the annotation.
func (f *Filter) writeMap() error {
	if err := f.W.OnMapStart(1); err != nil {
		return err
	}
	if err := f.writeEntry(); err != nil {
		return err
	}
	return f.W.OnMapEnd()
}

// writeEntry writes the annotation's key and value.
func (f *Filter) writeEntry() error {
	f.annotated = true
	if err := f.W.OnSymbol([]byte(f.AnnotationKey)); err != nil {
		return err
	}
	return f.W.OnString([]byte(f.AnnotationValue))
}

// before is called at the start of every value, with its kind and, for a
// ulong, its value, for a symbol or string, its bytes. It returns keep
// false when the value is not to be forwarded: dropped (a …Start method
// then returns amqpsax.SkipValue, so the decoder skips the whole value),
// replaced, or on error.
func (f *Filter) before(k amqpsax.Kind, u uint64, b []byte) (keep bool, err error) {
	if f.held {
		// The descriptor of a section: now its start can be written, after
		// the annotations if this section must follow them.
		f.held = false
		f.section = whichSection(k, u, b)
		if !f.annotated && f.section > amqpsax.DescriptorMessageAnnotations && f.section <= amqpsax.DescriptorFooter {
			if err := f.writeSection(); err != nil {
				return false, err
			}
		}
		if err := f.W.OnDescribedStart(); err != nil {
			return false, err
		}
		return true, nil
	}
	if f.inMap && f.depth == 2 {
		// A key or value of the annotations or application properties.
		key := f.index%2 == 0
		f.index++
		if f.drop {
			f.drop = false
			return false, nil
		}
		if key && f.dropKey(k, b) {
			f.drop = true
			return false, nil
		}
	}
	if f.depth == 1 && f.section == amqpsax.DescriptorMessageAnnotations && k == amqpsax.KindNull {
		// Message annotations given as null rather than a map: write a map.
		return false, f.writeMap()
	}
	return true, nil
}

// dropKey reports whether a map key of kind k and bytes b is to be
// dropped with its value: the application property DropProperty, or an
// annotation of the key Filter adds (replaced, since keys are unique).
func (f *Filter) dropKey(k amqpsax.Kind, b []byte) bool {
	switch f.section {
	case amqpsax.DescriptorApplicationProperties:
		return k == amqpsax.KindString && string(b) == f.DropProperty
	case amqpsax.DescriptorMessageAnnotations:
		return k == amqpsax.KindSymbol && string(b) == f.AnnotationKey
	}
	return false
}

// whichSection returns the section a descriptor of kind k names (u for a ulong,
// b for a symbol), or 0 when it names none.
func whichSection(k amqpsax.Kind, u uint64, b []byte) amqpsax.Descriptor {
	var d amqpsax.Descriptor
	switch k {
	case amqpsax.KindUlong:
		d = amqpsax.Descriptor(u)
	case amqpsax.KindSymbol:
		d, _ = amqpsax.LookupDescriptor(b)
	}
	if d < amqpsax.DescriptorHeader || d > amqpsax.DescriptorFooter {
		return 0
	}
	return d
}

// primitive runs before for a value that is not a compound, nor a ulong,
// string or symbol (whose contents before needs); the caller forwards the
// value when keep is true, else returns err.
func (f *Filter) primitive(k amqpsax.Kind) (keep bool, err error) { return f.before(k, 0, nil) }

// start runs before for a list, map, array or described value and opens
// its level. The caller forwards the start event when forward is true,
// else returns err, which is amqpsax.SkipValue when the value is dropped.
func (f *Filter) start(k amqpsax.Kind) (forward bool, err error) {
	keep, err := f.before(k, 0, nil)
	if err != nil {
		return false, err
	}
	if !keep {
		return false, amqpsax.SkipValue
	}
	if k == amqpsax.KindMap && f.depth == 1 &&
		(f.section == amqpsax.DescriptorMessageAnnotations || f.section == amqpsax.DescriptorApplicationProperties) {
		f.inMap, f.index = true, 0
	}
	f.depth++
	return true, nil
}

// OnNull forwards a null to W, unless it is dropped.
func (f *Filter) OnNull() error {
	if keep, err := f.primitive(amqpsax.KindNull); !keep {
		return err
	}
	return f.W.OnNull()
}

// OnBool forwards a boolean to W, unless it is dropped.
func (f *Filter) OnBool(v bool) error {
	if keep, err := f.primitive(amqpsax.KindBool); !keep {
		return err
	}
	return f.W.OnBool(v)
}

// OnUbyte forwards a ubyte to W, unless it is dropped.
func (f *Filter) OnUbyte(v uint8) error {
	if keep, err := f.primitive(amqpsax.KindUbyte); !keep {
		return err
	}
	return f.W.OnUbyte(v)
}

// OnUshort forwards a ushort to W, unless it is dropped.
func (f *Filter) OnUshort(v uint16) error {
	if keep, err := f.primitive(amqpsax.KindUshort); !keep {
		return err
	}
	return f.W.OnUshort(v)
}

// OnUint forwards a uint to W, unless it is dropped.
func (f *Filter) OnUint(v uint32) error {
	if keep, err := f.primitive(amqpsax.KindUint); !keep {
		return err
	}
	return f.W.OnUint(v)
}

// OnUlong forwards a ulong to W, unless it is dropped.
func (f *Filter) OnUlong(v uint64) error {
	if keep, err := f.before(amqpsax.KindUlong, v, nil); !keep {
		return err
	}
	return f.W.OnUlong(v)
}

// OnByte forwards a byte to W, unless it is dropped.
func (f *Filter) OnByte(v int8) error {
	if keep, err := f.primitive(amqpsax.KindByte); !keep {
		return err
	}
	return f.W.OnByte(v)
}

// OnShort forwards a short to W, unless it is dropped.
func (f *Filter) OnShort(v int16) error {
	if keep, err := f.primitive(amqpsax.KindShort); !keep {
		return err
	}
	return f.W.OnShort(v)
}

// OnInt forwards an int to W, unless it is dropped.
func (f *Filter) OnInt(v int32) error {
	if keep, err := f.primitive(amqpsax.KindInt); !keep {
		return err
	}
	return f.W.OnInt(v)
}

// OnLong forwards a long to W, unless it is dropped.
func (f *Filter) OnLong(v int64) error {
	if keep, err := f.primitive(amqpsax.KindLong); !keep {
		return err
	}
	return f.W.OnLong(v)
}

// OnFloat forwards a float to W, unless it is dropped.
func (f *Filter) OnFloat(v float32) error {
	if keep, err := f.primitive(amqpsax.KindFloat); !keep {
		return err
	}
	return f.W.OnFloat(v)
}

// OnDouble forwards a double to W, unless it is dropped.
func (f *Filter) OnDouble(v float64) error {
	if keep, err := f.primitive(amqpsax.KindDouble); !keep {
		return err
	}
	return f.W.OnDouble(v)
}

// OnDecimal32 forwards a decimal32 to W, unless it is dropped.
func (f *Filter) OnDecimal32(v amqpsax.Decimal32) error {
	if keep, err := f.primitive(amqpsax.KindDecimal32); !keep {
		return err
	}
	return f.W.OnDecimal32(v)
}

// OnDecimal64 forwards a decimal64 to W, unless it is dropped.
func (f *Filter) OnDecimal64(v amqpsax.Decimal64) error {
	if keep, err := f.primitive(amqpsax.KindDecimal64); !keep {
		return err
	}
	return f.W.OnDecimal64(v)
}

// OnDecimal128 forwards a decimal128 to W, unless it is dropped.
func (f *Filter) OnDecimal128(v amqpsax.Decimal128) error {
	if keep, err := f.primitive(amqpsax.KindDecimal128); !keep {
		return err
	}
	return f.W.OnDecimal128(v)
}

// OnChar forwards a char to W, unless it is dropped.
func (f *Filter) OnChar(v rune) error {
	if keep, err := f.primitive(amqpsax.KindChar); !keep {
		return err
	}
	return f.W.OnChar(v)
}

// OnTimestamp forwards a timestamp to W, unless it is dropped.
func (f *Filter) OnTimestamp(ms int64) error {
	if keep, err := f.primitive(amqpsax.KindTimestamp); !keep {
		return err
	}
	return f.W.OnTimestamp(ms)
}

// OnUUID forwards a uuid to W, unless it is dropped.
func (f *Filter) OnUUID(v uuid.UUID) error {
	if keep, err := f.primitive(amqpsax.KindUUID); !keep {
		return err
	}
	return f.W.OnUUID(v)
}

// OnBinary forwards a binary to W, unless it is dropped.
func (f *Filter) OnBinary(v []byte) error {
	if keep, err := f.primitive(amqpsax.KindBinary); !keep {
		return err
	}
	return f.W.OnBinary(v)
}

// OnString forwards a string to W, unless it is dropped.
func (f *Filter) OnString(v []byte) error {
	if keep, err := f.before(amqpsax.KindString, 0, v); !keep {
		return err
	}
	return f.W.OnString(v)
}

// OnSymbol forwards a symbol to W, unless it is dropped.
func (f *Filter) OnSymbol(v []byte) error {
	if keep, err := f.before(amqpsax.KindSymbol, 0, v); !keep {
		return err
	}
	return f.W.OnSymbol(v)
}

// OnListStart forwards the start of a list to W, or returns
// amqpsax.SkipValue when the list is dropped.
func (f *Filter) OnListStart(count int) error {
	if ok, err := f.start(amqpsax.KindList); !ok {
		return err
	}
	return f.W.OnListStart(count)
}

// OnListEnd forwards the end of a list to W.
func (f *Filter) OnListEnd() error {
	f.depth--
	return f.W.OnListEnd()
}

// OnMapStart forwards the start of a map to W, or returns
// amqpsax.SkipValue when the map is dropped.
func (f *Filter) OnMapStart(pairs int) error {
	if ok, err := f.start(amqpsax.KindMap); !ok {
		return err
	}
	return f.W.OnMapStart(pairs)
}

// OnMapEnd closes a map; at the end of the message-annotations map it
// first appends the annotation.
func (f *Filter) OnMapEnd() error {
	f.depth--
	if f.inMap && f.depth == 1 {
		f.inMap = false
		if f.section == amqpsax.DescriptorMessageAnnotations {
			if err := f.writeEntry(); err != nil {
				return err
			}
		}
	}
	return f.W.OnMapEnd()
}

// OnArrayStart forwards the start of an array to W, or returns
// amqpsax.SkipValue when the array is dropped.
func (f *Filter) OnArrayStart(count int, elem amqpsax.Kind) error {
	if ok, err := f.start(amqpsax.KindArray); !ok {
		return err
	}
	return f.W.OnArrayStart(count, elem)
}

// OnArrayEnd forwards the end of an array to W.
func (f *Filter) OnArrayEnd() error {
	f.depth--
	return f.W.OnArrayEnd()
}

// OnDescribedStart opens a described value; at the top level, a section,
// whose start event is held until its descriptor.
func (f *Filter) OnDescribedStart() error {
	top := f.depth == 0
	if ok, err := f.start(amqpsax.KindDescribed); !ok {
		return err
	}
	if top {
		f.held = true
		return nil
	}
	return f.W.OnDescribedStart()
}

// OnDescribedEnd forwards the end of a described value to W.
func (f *Filter) OnDescribedEnd() error {
	if f.depth--; f.depth == 0 {
		f.section = 0
	}
	return f.W.OnDescribedEnd()
}

var _ amqpsax.Handler = (*Filter)(nil)
