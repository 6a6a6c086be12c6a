package wire

// Counters of the work the decoders do, for the resource tests
// (internal/resource), which check that work grows linearly with the
// input. They are kept only in a build with the tag amqpsax_work; in every
// other build Counting is false, and each `if Counting { … }` is removed
// by the compiler, so the hot paths carry no counting and no shared
// state.
type Counters struct {
	Values   int // values read by dispatch and stream, array elements included
	Skipped  int // values stepped over by Skip
	Checked  int // bytes checked as UTF-8 or ASCII
	Compared int // descriptor bytes compared by encode.Writer
	Sections int // message sections read by message.Scan
	Stepped  int // bytes of compounds message.Decode's tight loops checked
}

// Work is where a counting build counts. It is not safe for concurrent
// use, and only tests read it.
var Work Counters
