// Package message works on whole encoded AMQP 1.0 messages (AMQP 1.0 part
// 3 §3.2) the way a broker or router does: find the sections, read a few
// fields, stamp an annotation or bump the delivery count, and forward the
// message — never decoding the body and never changing a byte of the bare
// message, which other peers sign and checksum.
//
// # Sections
//
// [Scan] finds every section in one pass, skipping each by its size: O(1)
// per section whatever the body's size, no allocation. Each section is
// handed out whole (descriptor included) as a view into the input, valid
// as long as the input is, with its offset in [Sections.Offsets]. Bare is
// the bare message, properties through body, when its sections lie
// together.
//
// Sections may come in any order, as deployed encoders write them (uAMQP-C
// writes delivery annotations after the application properties; rhea, the
// footer before the body): Scan reports [Sections.OutOfOrder], and
// [Append] writes them back in the spec's order. Duplicates, body sections
// of mixed kinds or apart, and values that are not sections are errors.
//
// # Prefixes
//
// A router that has the first transfer frame of a large message can decide
// before the rest arrives: on a prefix, Scan returns every section
// complete in it, and an error wrapping io.ErrUnexpectedEOF whose offset is
// where the section the input ends in starts (one allocation: the error;
// a [Scanner], which keeps that error's storage, makes none). Any other
// error means the message is malformed: reject it. Once the delivery has
// ended (its last transfer frame, more = false), a cut means reject too:
// the bytes alone cannot tell a whole message from a prefix that ends
// between sections, or from one whose size was corrupted.
//
// # Accessors
//
// [ParseHeader] and [ParseProperties] read every field of those sections
// (message-id and correlation-id in any of their four types; null fields
// take their defaults); [Lookup] and [LookupKey] find an application
// property, annotation or footer entry by key — a symbol or string, or for
// annotations a ulong ([Key]) — and return it as a stream.Value, read
// with its getters. None allocates: byte fields are views. [AnyMap] returns a
// map section as Go values, for when they are wanted (it allocates).
// [BodyValues] yields the value of each body section (a data section's
// payload, a sequence's list, the amqp-value). [AppendHeader] and
// [AppendProperties] write the header and properties back from their
// structs, as Qpid Proton writes them byte for byte.
//
// # Splice
//
// [Append] writes a new message with a changed header, delivery annotations
// or message annotations (add, replace or remove entries by key) and the
// bare message and footer copied byte for byte. Every value it is given
// must be exactly one well-formed AMQP value; anything else is an error and
// nothing is appended. It appends into the caller's buffer and does not
// allocate when the buffer has room.
//
// # Whole messages
//
// A client makes and keeps messages: [Message] holds one whole — header
// and properties typed ([Header], [Properties]), delivery and message
// annotations, application properties and footer as ordered [Entries]
// (each entry a key and a value, both stream.Value views, found by key
// with [Entries.Get] and [Entries.GetKey], walked in order with
// [Entries.All]; built from [Field]s with [EntriesOf]), the body as data
// payloads, amqp-sequence lists or one amqp-value ([Body]).
//
// [Message.Decode] keeps one copy of the input in storage the Message
// owns and reuses, and views into it: decoding into a reused Message
// allocates nothing once warm, and the input may be reused at once
// ([Message.DecodeNoCopy] shares the input instead, for a buffer handed
// over whole). Every compound value is checked whole, so a decoded
// Message is safe to read and to write back; errors follow Scan's rule —
// a cut only where the input ends inside a section, any fault inside a
// complete one malformed, with its offset in the message.
//
// [Message.Append] encodes a Message into the caller's buffer, in the
// spec's section order, growing it at most once: byte for byte what Qpid
// Proton writes (testdata/build checks it with Proton), and for a decoded
// message the bytes it came from wherever its peer wrote as Proton does.
// Build the values with a [Values]: typed ([Values.String],
// [Values.Symbol], [Values.Ulong] …), from Go values ([Values.Any],
// [Values.PropertiesOf] and [Values.AnnotationsOf] for a map[string]any,
// written with its keys in byte order so that the same map always gives
// the same bytes), or already encoded ([Values.Raw], checked as Append
// checks an edit's values). [UlongID], [UUIDID], [BinaryID], [StringID]
// and [IDOf] make a message-id or correlation-id of each of its four
// types; [Properties.SetCreationTime] and [Properties.CreationTimeAt]
// (and the absolute-expiry-time pair) convert timestamps to time.Time.
//
// # AMQP types and Go types
//
// [Values.Any] writes a Go value as the AMQP type on its right;
// stream.Value.Any (and stream.Cursor.Any, [Map]) reads an AMQP value
// as the Go type in the last column. Symbols and strings stay apart both ways:
// a Go string is an AMQP string, a stream.Symbol an AMQP symbol.
//
//	Go                          AMQP (written)        Go (read back)
//	nil                         null                  nil
//	bool                        boolean               bool
//	uint8, uint16, uint32       ubyte, ushort, uint   the same
//	uint64, uint                ulong                 uint64
//	int8, int16, int32          byte, short, int      the same
//	int64, int                  long                  int64
//	float32, float64            float, double         the same
//	amqpsax.Decimal32/64/128    decimal32/64/128      the same
//	(Values.Char)               char                  rune (an int32)
//	time.Time                   timestamp (ms)        time.Time, UTC
//	uuid.UUID                   uuid                  uuid.UUID
//	[]byte                      binary                []byte (a copy)
//	string                      string                string
//	stream.Symbol               symbol                stream.Symbol
//	[]any                       list                  []any
//	map[string]any              map, string keys      map[any]any
//	map[stream.Symbol]any       map, symbol keys      map[any]any
//	map[any]any                 map                   map[any]any
//	[]string, []stream.Symbol   array of string/sym   []any
//	[]int64                     array of long         []any
//	stream.Described            described             stream.Described
//	stream.Value                as it is encoded      -
//
// Maps are written in a fixed order: string and symbol keys in byte
// order, other keys by the bytes of their encodings. A rune is an int32
// in Go, so it is written as an int: use [Values.Char] for a char. Every
// integer takes its smallest encoding, and lists, maps and arrays the
// 8-bit form when they fit (Proton writes them with 32-bit sizes inside
// values: the values are equal, the bytes not). A message-id or
// correlation-id is a ulong, uuid, binary or string ([ID], [IDOf]).
//
// # Errors
//
// Malformed input is an *amqpsax.Error with a cause for errors.Is: the
// decoders' causes (io.ErrUnexpectedEOF, amqpsax.ErrMalformed …) or this
// package's ErrNotSection, ErrSectionOrder, ErrDuplicateSection,
// ErrMixedBody, ErrSectionType and ErrOtherSection. The Op says where the
// offset counts from: "message" for Scan, whose offsets are in the message
// and whose cause is a *SectionError naming the section ("message: footer:
// duplicate section at offset 120"); "message/" and the section's name for
// the accessors, whose offsets are in that section's bytes
// ("message/properties: value of the wrong type (str8-utf8) at offset 9");
// "message/edit" for a value given to Append, offsets in that value.
// Nothing panics on any input.
package message
