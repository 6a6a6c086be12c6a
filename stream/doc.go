// Package stream is a pull decoder for the AMQP 1.0 type system (AMQP 1.0
// part 1 §1.6): a [Cursor] the caller moves through encoded values, reading
// only what it wants and converting on demand.
//
// # Call grammar
//
// A walk is [Cursor.Reset], then at each level [Cursor.Next] to a value,
// its getters, [Cursor.Enter] into it and [Cursor.Exit] out of the level:
//
//	walk = Reset { Next { getter } [ Enter walk' Exit ] } ; walk' = { Next { getter } [ Enter walk' Exit ] }
//
// and [Cursor.Err] says why Next returned false:
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
// values, descriptor then value ([Cursor.EnterValue] goes straight to the
// value, a section's list or map). Inside an array Code is the array's
// element constructor and Raw an element's body without it; an element of
// an array of described values is itself a described value whose
// descriptor is the array's.
//
// # Null is absence
//
// In AMQP any field may be null, meaning absent. Every getter on a null
// value returns the zero value ([Cursor.Bytes] returns nil) and records
// nothing; [Cursor.IsNull] tells the two apart. A getter on a non-null
// value of another kind never panics: it returns the zero value and
// records an error whose cause is an *amqpsax.KindError naming the kind
// wanted and the kind found ("want string, have int"), which unwraps to
// amqpsax.ErrWrongKind.
//
// # Values
//
// [Cursor.Value] hands out the current value as a [Value]: a view with its
// type, read with the same getters, to keep after the cursor moves;
// [ParseValue] makes one from encoded bytes, checked whole. Package
// message's lookups return them. [Cursor.Any] and [Value.Any] build plain
// Go values (maps, slices, strings) when they are wanted; they allocate,
// as Go values must.
//
// # Lifetimes
//
// Bytes, Raw and the views in a Value point into the data given to Reset,
// valid as long as that data is: nothing is copied. The cursor allocates
// nothing once warm (Reset reuses its level stack), and a Cursor declared
// where it is used allocates nothing for the first four levels.
//
// # Errors
//
// Err returns the first error: bad input as an *amqpsax.Error with the
// byte offset of the fault, a getter on a value of another kind, or Enter
// on a value that is not a compound. The error is sticky: after it Next,
// Enter and Exit return false. Errors and their offsets are those package
// dispatch reports for the same input: a value's length fields are
// checked when Next lands on it, a compound's contents against its size
// when the last of them has been read. A value at the top level (or in
// described values there) that runs past the input's end is a cut
// (io.ErrUnexpectedEOF); one that runs past its list, map or array is
// malformed (amqpsax.ErrOverrun), whether the input goes on or ends there
// too. A size or count field that no input could satisfy is malformed at
// once, even where the input ends right after it.
//
// # Limits
//
// MaxDepth bounds the levels Enter may open ([amqpsax.DefaultMaxDepth] when 0).
// With Validate set, Next checks that a string it lands on is UTF-8 and a
// symbol ASCII, and an array's descriptor once, when the array is read;
// values skipped over are not checked. No size or count the input claims
// makes the cursor allocate or loop more than the input's length allows.
//
// [Cursor.Any] and [Value.Any] make at most two Go values per byte of the
// value they read (its constructor included), and so allocate at most
// about 128 bytes per byte of it (a list of one-entry maps, the costliest
// shape a peer can send, takes about 70). Every value a peer encodes takes
// at least a byte, but an array's zero-width elements (null, true, false,
// uint0, ulong0, list0) take none, so the wire's own bound on their count
// (255 plus 32 per byte of the array) would let a few bytes ask for
// hundreds of values: a value whose compounds claim more values than its
// length buys is an error wrapping [ErrAnyLimit] at the offset of the
// list, map or array that overdraws, before anything is made for it. The
// elements of an array of described values share one Descriptor value,
// read once, so a long descriptor is not copied per element.
//
// # Helpers
//
// [Cursor.Seek] moves to element i of a list; [Cursor.SeekKey] and
// [Cursor.SeekUlongKey] find a map value by key, skipping the other values;
// [Cursor.Descriptor] reads a described value's descriptor without
// entering it (and on an array of described values, the descriptor its
// elements share, which an empty array has too); [Cursor.AppendInts],
// [Cursor.AppendUints], [Cursor.AppendDoubles], [Cursor.AppendFloats],
// [Cursor.AppendTimestamps] and [Cursor.AppendBytes] read a whole array
// into a caller's slice in one call.
package stream
