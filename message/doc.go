// Package message works on whole encoded AMQP 1.0 messages (AMQP 1.0 part
// 3 §3.2) the way a broker or router does: find the sections, read a few
// fields, stamp an annotation or bump the delivery count, and forward the
// message — never decoding the body and never changing a byte of the bare
// message, which other peers sign and checksum.
//
// # Sections
//
// Scan finds every section in one pass, skipping each by its size: O(1)
// per section whatever the body's size, no allocation. Each section is
// handed out whole (descriptor included) as a view into the input, valid
// as long as the input is. Bare is the bare message: properties through
// body.
//
// # Accessors
//
// ParseHeader and ParseProperties read every field of those sections
// (message-id and correlation-id in any of their four types); Lookup finds
// an application property, annotation or footer entry by key and returns
// its encoded value. None allocates: byte fields are views.
//
// # Splice
//
// Append writes a new message with a changed header, delivery annotations
// or message annotations (add, replace or remove entries) and the bare
// message and footer copied byte for byte. It appends into the caller's
// buffer and does not allocate when the buffer has room.
//
// # Errors
//
// Malformed input is an *amqpsax.Error with the byte offset of the fault
// (within the message for Scan, within the section for the accessors) and
// a cause for errors.Is: the decoders' causes (io.ErrUnexpectedEOF,
// amqpsax.ErrMalformed …) or this package's ErrNotSection,
// ErrSectionOrder, ErrDuplicateSection, ErrMixedBody and ErrSectionType.
// Nothing panics on any input.
//
// # Peers that bend the spec
//
// Descriptors may be ulong (smallulong or eight bytes) or the symbolic
// names. A footer written before the body, as a widely used JavaScript
// client writes it, is accepted (Sections.FooterFirst); every other
// departure from the spec's section order is an error. Address and string
// fields of the properties may be strings or symbols.
package message
