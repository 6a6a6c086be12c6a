// Package stream is a pull decoder for the AMQP 1.0 type system (AMQP 1.0
// part 1 §1.6): a Cursor the caller moves through encoded values, reading
// only what it wants and converting on demand.
//
// # Call grammar
//
// Reset, then at each level: Next moves to a value; its getters (Kind,
// Code, Raw, Offset, Count, Bool, Uint, …) read it; Enter moves into a
// list, map, array or described value; Exit leaves the level; Err says why
// Next returned false:
//
//	c.Reset(data)
//	for c.Next() {
//		switch c.Kind() {
//		case amqpsax.KindList:
//			c.Enter()
//			for c.Next() { … }
//			c.Exit()
//		case amqpsax.KindString:
//			use(c.Bytes())
//		}
//	}
//	if err := c.Err(); err != nil { … }
//
// Next without Enter skips the current value whole: a list, map or array
// by its size prefix in O(1), a described value by its descriptor and
// value. Exit skips the rest of a level the same way. Entering a map gives
// its keys and values alternately; entering a described value gives two
// values, descriptor then value. Inside an array Code is the array's
// element constructor and Raw an element's body without it; an element of
// an array of described values is itself a described value whose
// descriptor is the array's.
//
// # Lifetimes
//
// Bytes and Raw return views into the data given to Reset, valid as long
// as that data is: nothing is copied, and the cursor allocates nothing
// once warm (Reset reuses its level stack).
//
// # Errors
//
// Err returns the first error: bad input as an *amqpsax.Error with the
// byte offset of the fault, a getter called on a value of another kind
// (amqpsax.ErrWrongKind; the getter returns the zero value, never
// panics), or Enter on a value that is not a compound. The error is
// sticky: after it Next, Enter and Exit return false. Errors and their
// offsets are those package dispatch reports for the same input: a value's
// length fields are checked when Next lands on it, a compound's contents
// against its size when the last of them has been read.
//
// # Limits
//
// MaxDepth bounds the levels Enter may open (DefaultMaxDepth when 0).
// With Validate set, Next checks that a string it lands on is UTF-8 and a
// symbol ASCII; values skipped over are not checked. No size or count the
// input claims makes the cursor allocate or loop more than the input's
// length allows (see package wire's limits, documented on amqpsax.Error's
// causes).
//
// # Helpers
//
// Elem moves to element i of a list; Lookup finds a map value by string
// or symbol key, skipping the other values; Descriptor reads a described
// value's descriptor without entering it (and on an array of described
// values, the descriptor its elements share, which an empty array has
// too); AppendInts, AppendUints,
// AppendDoubles, AppendFloats and AppendTimestamps read a whole array of
// fixed-width numbers into a caller's slice in one call.
package stream
