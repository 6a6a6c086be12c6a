// Package dispatch is a push (SAX-style) decoder for the AMQP 1.0 type
// system (AMQP 1.0 part 1 §1.6): it walks encoded values and calls an
// amqpsax.Handler once per value, in wire order, without building objects
// and without allocating.
//
// # Contract
//
// Every encoding width of a type reaches the same Handler method; a map's
// keys and values arrive alternately; an array's elements arrive as
// ordinary values (in an array of described values, each element as a
// described value: start, descriptor, value, end). SkipValue returned from
// a …Start method skips that compound in O(1) without reading its
// contents; SkipAll stops with no error; any other Handler error is
// returned unchanged. A Handler that also implements amqpsax.BatchHandler
// receives arrays of fixed-width numbers in batches of up to 256; one that
// implements amqpsax.ArrayDescriptorHandler receives the descriptor of an
// array of described values once, before its elements (also when there
// are none).
//
// # Lifetimes
//
// Byte slices passed to OnBinary, OnString and OnSymbol are views into the
// input, valid only during the call; batches are the decoder's buffers,
// valid only during the call.
//
// # Context
//
// During a Handler call, [Decoder.Offset] is the offset in the input of
// the value being reported (for an …End event, of the compound that ends).
//
// # Errors
//
// Bad input is an *amqpsax.Error with the byte offset of the fault and the
// cause. A value at the top level (or in described values there) that
// runs past the end of the input is a cut (io.ErrUnexpectedEOF, at the
// offset of the value that runs past the end): more input may complete
// it. A value that runs past its list, map or array is malformed
// (amqpsax.ErrOverrun), whether the input goes on or ends there too: a
// compound is entered only once its size fits, so no more input can
// mend it. A size or count field that no input could satisfy (a size
// too small for its count field, a count larger than its size, an odd
// map count) is malformed at once, even where the input ends right after
// it. A value's length fields are checked before its events;
// a compound's contents are checked against its size when they end. When a
// Handler stops decoding (an error, or SkipAll), Decode's n is the offset
// reached, whatever the error.
//
// # Limits
//
// The loop keeps open compounds on its own stack, not the Go stack, so
// deep input cannot overflow it; MaxDepth ([amqpsax.DefaultMaxDepth] when 0) bounds
// nesting: lists (list0 included), maps, arrays and described values each
// count a level, as they do for a stream.Cursor. Validate turns on UTF-8 checks of strings and ASCII checks of
// symbols. A Decoder is reusable and allocates nothing once warm: the
// tests check it with testing.AllocsPerRun over the whole Proton corpus.
package dispatch
