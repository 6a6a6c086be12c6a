package wire

// Level is the kind of a level of nesting a decoder walks: the push
// decoder (dispatch) and the pull cursor (stream) keep the same kinds and
// read them by the rules below, so that both report the same fault, with
// the same cause, at the same offset.
//
// The values of the first four kinds each start with their own
// constructor; those of the rest share their array's (k < LvArray tells
// which, in one comparison).
type Level uint8

const (
	LvTop       Level = iota // the top level: values one after another until the input (or the caller's count) ends
	LvList                   // a list's elements
	LvMap                    // a map's keys and values, alternately
	LvDescribed              // a described value: descriptor, then value
	LvArray                  // an array's element bodies
	LvDescArray              // an array of described values: each element a described value
	LvDescElem               // one of those: the array's descriptor, replayed, then the element's body
)

// Sized reports whether a level of kind k has a size of its own, checked
// to fit in the input when the level was entered: a list, map or array,
// or an element of an array of described values (inside its array). A
// described value carries no size; its level is sized only when measured
// is true, that is when the walker found its end (Skip) before
// entering it — the cursor does for Raw; dispatch never measures. Inside
// a sized level (at any depth) a value that runs past the level is
// Overrun, never a cut: see Cut and Status.In.
func (k Level) Sized(measured bool) bool {
	return k != LvTop && (k != LvDescribed || measured)
}

// Replayed reports whether the value read next at a level of kind k, with
// left values still to read there after it, is an array's descriptor
// replayed for one of its elements: its text was checked once, when the
// array was read (CheckDescriptor), and is not checked again.
func (k Level) Replayed(left int) bool {
	return k == LvDescElem && left == 1
}

// Ends reports whether the values of a level of kind k must end exactly
// where its size says (a list, map or array): the check, when the last of
// them has been read, that turns a short count into SizeMismatch.
func (k Level) Ends() bool {
	switch k {
	case LvList, LvMap, LvArray, LvDescArray:
		return true
	}
	return false
}

// In turns the status of a wire primitive run on the values of a level
// into the walker's: EOF, a value that does not fit, is Cut(sized), where
// sized tells whether that level or one enclosing it is Sized; any other
// status is kept.
func (s Status) In(sized bool) Status {
	if s == EOF {
		return Cut(sized)
	}
	return s
}
