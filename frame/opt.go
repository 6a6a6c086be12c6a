package frame

import "strconv"

// Opt is a field that may be absent and whose zero value means something
// of its own: a handle of 0, a link-credit of 0, a channel-max of 0. Its
// zero value is absent; [Some] makes a present one. Append functions
// write an Opt field exactly when it is present, zero included, and Parse
// functions make it present exactly when the field was on the wire and not
// null.
//
// The type carries the presence so that the obvious struct literal sends
// what it says: Flow{LinkCredit: Some[uint32](0)} stops a sender, and
// Flow{} says nothing of credit at all. (A bit set beside a plain uint32
// can be forgotten, and a default written in for the caller turns its zero
// into the opposite meaning: channel-max 0 into 65535.)
type Opt[T any] struct {
	v  T
	ok bool
}

// Some returns a present Opt holding v. With an untyped constant, name the
// type: Some[uint32](0).
func Some[T any](v T) Opt[T] { return Opt[T]{v: v, ok: true} }

// Get returns the value and whether it is present (the zero value when
// not).
func (o Opt[T]) Get() (T, bool) { return o.v, o.ok }

// Or returns the value when present, and def when not: a field's value
// with the spec's default applied, as in o.ChannelMax.Or(SpecChannelMax).
func (o Opt[T]) Or(def T) T {
	if o.ok {
		return o.v
	}
	return def
}

// Present reports whether the field is present.
func (o Opt[T]) Present() bool { return o.ok }

// String formats the value, or "absent".
func (o Opt[T]) String() string {
	if !o.ok {
		return "absent"
	}
	switch v := any(o.v).(type) {
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case uint16:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case interface{ String() string }:
		return v.String()
	}
	return "present"
}

// The spec's defaults of the fields that are Opt, for Opt.Or.
const (
	SpecChannelMax    uint16           = 1<<16 - 1 // open channel-max
	SpecHandleMax     uint32           = 1<<32 - 1 // begin handle-max
	SpecSndSettleMode SenderSettleMode = SndMixed  // attach snd-settle-mode
)
