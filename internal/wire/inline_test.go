package wire

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// mustInline lists, per package, the functions the hot paths count on the
// compiler inlining: the payload readers every decoder calls per value,
// and the cursor accessors a caller calls per value. A change that pushes
// one past the inlining budget fails here, not silently in a benchmark.
// (The pattern of Go's cmd/compile/internal/test/inl_test.go.)
var mustInline = map[string][]string{
	"./internal/wire": {"Uint", "Int", "Bool", "Float", "Double", "Char", "Timestamp", "ValidUTF8", "ValidASCII", "Status.Err",
		"Var8", "Var32", "Compound8", "Compound32", "Info.Op", "Info.Kind", "Info.Cat", "Info.W", "Info.Sh", "IntEnding", "UintEnding",
		"Level.Sized", "Level.Replayed", "Level.Ends", "Status.In"},
	// The getters a walk calls per value: with them inlined, reading an
	// int costs a load and a shift (bench/perf/run.sh counts it).
	"./stream": {"(*Cursor).Reset", "(*Cursor).Err", "(*Cursor).Kind", "(*Cursor).IsNull", "(*Cursor).Code",
		"(*Cursor).Offset", "(*Cursor).Count", "(*Cursor).Depth", "(*Cursor).Index",
		"(*Cursor).Int", "(*Cursor).Uint", "(*Cursor).Bytes", "(*Cursor).Timestamp", "(*Cursor).Char",
		"Value.Kind", "Value.IsNull", "Value.Raw", "Value.Int", "Value.Uint", "Value.Bytes"},
	"./dispatch": {"(*Decoder).Offset", "(*Decoder).push", "(*state).pop"},
	// Message.Append's: an absent map section costs a test, not a call.
	"./message": {"appendEntries", "hasID", "writableID"},
}

func TestInlining(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with -gcflags=-m")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for pkg, funcs := range mustInline {
		cmd := exec.Command("go", "build", "-gcflags=-m", pkg)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		for _, f := range funcs {
			if !strings.Contains(string(out), "can inline "+f+"\n") && !strings.Contains(string(out), "can inline "+f+" ") {
				t.Errorf("%s: %s is no longer inlinable", pkg, f)
			}
		}
	}
}
