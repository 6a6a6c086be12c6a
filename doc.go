// Package amqpsax is the shared vocabulary of a decoder for the AMQP 1.0
// type system (OASIS AMQP 1.0 part 1, "Types"): format codes ([Code]), AMQP
// types ([Kind]), the descriptors the spec defines ([Descriptor]), the
// [Handler] that push decoders call, and the one error type every decoder
// returns for bad input ([Error]). It holds no decoding loop.
//
// The work is done by its packages:
//
//   - [github.com/amqpsax/amqpsax/dispatch]: a push (SAX-style) decoder
//     calling a [Handler] per value.
//   - [github.com/amqpsax/amqpsax/stream]: a pull cursor that reads on
//     demand and skips whole compounds in O(1).
//   - [github.com/amqpsax/amqpsax/encode]: Append functions for every type
//     and width, and Writer, a [Handler] that encodes.
//   - [github.com/amqpsax/amqpsax/message]: sections of whole messages
//     found in O(1) each, typed accessors, and a splice re-encoder that
//     never touches the bare message.
//   - [github.com/amqpsax/amqpsax/frame]: the protocol layer above the
//     types: frames off a connection, typed performatives and their
//     encoders, deliveries joined across transfers.
//   - [github.com/amqpsax/amqpsax/engine]: the conversation above the
//     frames (connections, sessions, links, credit, settlement), sans-IO,
//     with a thin driver over net.Conn.
//
// The tools in cmd/ (amqpdump, amqpspy) and the programs in examples/ use
// only these packages.
//
// # Code, Kind, Descriptor
//
// A [Code] is the constructor byte on the wire: [CodeSmallUint],
// [CodeStr8], [CodeList32]. A [Kind] is the AMQP type those encode:
// [KindUint], [KindString], [KindList]. A [Descriptor] is the number of a
// described type: 0x70 is the message header, not a uint. The three never
// mix.
//
// # Errors
//
// Decoders report bad input as [*Error]: the byte offset of the fault, the
// format code of the value at fault, and a cause for errors.Is —
// [io.ErrUnexpectedEOF] for truncation, [ErrMalformed] (and its
// refinements [ErrInvalidCode], [ErrCountTooLarge], [ErrSizeMismatch],
// [ErrOddMapCount], [ErrInvalidBool], [ErrInvalidArrayCode], [ErrOverrun],
// [ErrTrailing]), [ErrTooDeep], [ErrInvalidUTF8], [ErrInvalidSymbol]. A
// getter on a value of another kind records a [*KindError] (which unwraps
// to [ErrWrongKind]). Errors a [Handler] returns pass through unchanged.
//
// A cut is not a fault: an error wraps io.ErrUnexpectedEOF only when the
// input itself ends before a value that claims to continue past it, and
// no list, map or array holds the value: the case where more bytes (the
// next transfer frame) will complete it. A list, map or array is entered
// only once its size fits in the input, so a value that runs past its end
// is [ErrOverrun], which wraps [ErrMalformed], whether the input goes on or
// ends there too: no more input can mend it. A loop that reassembles
// deliveries waits on [io.ErrUnexpectedEOF] and rejects on any other
// error. A frame body is whole: a fault inside it is never a cut.
//
// # Where peers bend the spec
//
// Every legal encoding is accepted, including widths no common peer
// writes (0x56 booleans, uint and ulong in their 4- and 8-byte forms for
// small values, str32 for short strings, list8 and array8, zero-width
// array elements) and symbolic descriptors. Illegal encodings are
// rejected even where Qpid Proton lets them pass (its corpus in
// testdata/proton lists them in proton-quirks.jsonl): a 0x56 boolean
// byte other than 0 or 1 (Proton reads it as true) is [ErrInvalidBool]; a
// list or map whose elements do not end where its size says (Proton
// ignores the size) is [ErrSizeMismatch]; a value running past the end of
// its container is [ErrOverrun]. Strings are checked for UTF-8, and chars
// not at all, only when a decoder is asked to validate.
//
// # Limits on what input can claim
//
// No decoder allocates or loops in proportion to a size or count that the
// input merely claims. Sizes are checked against the bytes present before
// use; a compound's count must fit in its size (each element takes at
// least a byte); an array whose elements take no bytes (null, true, false,
// uint0, ulong0, list0) may hold at most 255 + 32 × its size elements;
// the descriptor of an array's elements must be a primitive other than
// list0, since it is replayed for every element, and with validation on
// it is checked once per array, not once per element (so an empty array's
// descriptor is checked too). Nesting is bounded by each decoder's
// MaxDepth, which counts every list (list0 included), map, array and
// described value.
//
// So the work of decoding is bounded by a constant times the input's
// length: at most 255 + 32 values per byte (zero-width arrays), and for a
// Cursor asked for Raw at every level, at most MaxDepth walks per byte (a
// described value's descriptor carries no size). The resource tests in
// internal/resource check that work, counted, grows linearly.
//
// # Empty arrays of described values
//
// An array of described values names its descriptor once, in its
// constructor, which an empty array has too. It is part of the value:
// [github.com/amqpsax/amqpsax/stream.Cursor.Descriptor] returns it on the
// array, and a [Handler] that implements [ArrayDescriptorHandler] receives
// it after OnArrayStart, before any element;
// [github.com/amqpsax/amqpsax/encode.Writer] does, so a re-encoding keeps
// it.
package amqpsax
