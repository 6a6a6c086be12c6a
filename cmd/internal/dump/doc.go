// Package dump prints AMQP 1.0 encoded values and connection byte streams
// for amqpdump and amqpspy, through the public packages only: frames are
// read with frame.Reader, performatives checked with frame's Parse
// functions (once per frame), deliveries joined with frame.Assembler,
// messages checked with message.Scan. Values are walked once, with a
// stream.Cursor that enters everything (so its faults and their offsets
// are the ones package dispatch reports), by one walker (walk.go) that
// tells a sink what it meets: the text tree (text.go) or JSON
// (jsonsink.go). Field names come from frame's tables (frame.FieldName);
// names.go keeps what they lack: which fields are of an enumerated type.
//
// # Text
//
// One line per value, indented two spaces per level of nesting, with its
// type name (part 1 §1.6), its value, its encoding where that says more
// than the type ("<smalluint>", "<str8-utf8>"), the symbolic name of
// every descriptor the spec defines ("amqp:properties:list"), the names
// of the fields of the spec's described lists ("durable: boolean true"),
// and the names of enumerated values (role, settle modes, terminus
// durability, SASL outcome code):
//
//	described amqp:attach:list (ulong 0x12 <smallulong>)
//	  list[14] <list8>
//	    name: string "amqpsax-sender" <str8-utf8>
//	    handle: uint 0 <uint0>
//	    role: boolean false (sender) <false>
//	    snd-settle-mode: ubyte 2 (mixed)
//
// A map is printed one pair a line ("key => value") when the key is a
// primitive; an array's line gives its count, encoding and element type
// ("array[1] <array8> of symbol <sym8>"), and its elements share that
// encoding. Strings and symbols are quoted and cut after 64 bytes, a
// binary shows up to 32 bytes in hex, a timestamp is also shown in UTC.
//
// A stream of frames prints each protocol header and each frame's header
// fields and performative, then the performative's tree; the payloads of
// a delivery's transfers are joined and its message printed under the
// transfer that completes it.
//
// # JSON
//
// One object a line: a protocol header, a frame (with "time" and "delta"
// when the Stream knows when its bytes arrived, WriteAt), a fault, a
// delivery left incomplete, or a [Conn.Summary]. Each value keeps its AMQP
// type ({"type":"uint","value":7}; an array's elements bare, typed once
// by its "of"; a map as [key, value] pairs; a described list of
// named fields as "fields"), or with [Options].Plain is plain JSON. The
// schema is documented in cmd/amqpdump (and tested by decoding the output
// back, schema_test.go). JSON leaves nothing out: an array of 255 nulls in
// 4 bytes is 255 nulls, so JSON may be up to about 340 bytes per input
// byte; the output limit caps it.
//
// # Filters, times, summaries
//
// The two Streams of a connection share a [Conn]: the sessions paired by
// begin's remote-channel, the links by name, the deliveries waiting for
// their disposition. A [Filter] chooses the frames printed while every
// frame is still read into that state (a transfer left out is still
// joined to its delivery); [Conn.Summary] prints what it counted.
//
// # Secrets
//
// A sasl-init's initial-response (for PLAIN, the user's password) and a
// sasl-response's response are printed masked: their bytes replaced with
// as many '*' ([MaskByte]) before anything reads the frame, so the mask is
// what the text, the JSON and the summary show ("binary[20]
// 2a2a2a…"). [Options].ShowSecrets prints them as they are.
// [MaskSecrets] masks a frame's body in place; amqpspy masks what it
// records with it.
//
// # Limits
//
// Output is bounded by a constant times the input, whatever the input:
// of a run of identical values in a list or array (a zero-width array
// claims up to hundreds of thousands of elements in a few bytes) the
// first two are printed and the rest summed up in one line ("… 253 more
// null"); lines deeper than 32 levels are indented as at 32 and say their
// depth; strings and binaries are cut. Out.Limit caps the bytes written.
// Work is linear too: offsets inside a message joined from n transfers
// are found in amortised O(1) each, not O(n).
package dump
