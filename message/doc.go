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
