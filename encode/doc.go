// Package encode writes AMQP 1.0 values (AMQP 1.0 part 1 §1.6): one
// Append function per type, explicit-width variants so that every format
// code can be produced, compounds with back-patched size and count, and
// [Writer], an [github.com/amqpsax/amqpsax.Handler] that encodes the events it receives.
//
// # Widths
//
// [AppendUint], [AppendUlong], [AppendInt] and [AppendLong] choose the
// smallest encoding (uint0, smalluint, uint …); [AppendBool] writes true
// and false codes; [AppendBinary], [AppendString] and [AppendSymbol] use
// the 8-bit size form while the payload fits. These are the choices Qpid
// Proton makes, and the tests check them against bytes Proton wrote
// (testdata/proton).
//
// A function named Append + the name of a [amqpsax.Code] constant writes
// exactly that encoding, for tests and for peers that need a given width:
// [AppendCodeUint] writes [amqpsax.CodeUint] (0x70, four bytes),
// [AppendCodeSmallUint] [amqpsax.CodeSmallUint], [AppendCodeUint0]
// [amqpsax.CodeUint0], [AppendCodeBool] [amqpsax.CodeBool] (0x56),
// [AppendCodeStr32] [amqpsax.CodeStr32], [AppendCodeVbin32]
// [amqpsax.CodeVbin32], and so on; [EndList32], [EndMap32] and
// [EndArray32] end a compound as [amqpsax.CodeList32],
// [amqpsax.CodeMap32] and [amqpsax.CodeArray32].
//
// # Compounds
//
// [BeginList], [BeginMap] and [BeginArray] write a 32-bit header with room for
// size and count; [EndList], [EndMap] and [EndArray] patch it once the contents
// are written and, when they fit, rewrite it in the 8-bit form (moving at
// most 255 bytes). The caller never computes a size.
//
// The count and the start are the caller's, as with append and slicing:
// a count other than the number of values appended (for [EndMap], of pairs)
// writes a compound that decoders reject, and a start that is not where
// the matching Begin wrote its header — past the end of b, or a compound
// already ended — panics with an index out of range. The element code an
// Append…Elem function is given is the caller's too: a string of more than
// 255 bytes under CodeStr8 gets a wrong size byte. [Writer], fed events
// rather than counts, counts for itself, and fails with [ErrUnbalanced] on
// an end without its start.
//
// # Allocation
//
// No Append function allocates when the buffer has capacity, and a warm
// [Writer] (after Reset) encodes without allocating; both are tests.
//
// # Validation
//
// The encoder writes what it is given: strings are not checked for UTF-8,
// symbols for ASCII, chars for valid code points. Decoders check them when
// asked to.
package encode
