// Package corpus loads the interop corpus of testdata/proton (values,
// whole messages and performatives written and decoded by Qpid Proton)
// for the tests of every package. See testdata/proton/README.md.
package corpus

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Entry is one corpus record: the encoded bytes and the trace Proton's
// own decoder reported for them.
type Entry struct {
	Name    string `json:"name"`
	Code    string `json:"code"`   // values: the outer format code, "0x52"
	Source  string `json:"source"` // values: "proton" (Proton's encoder wrote the bytes) or "hand"
	Hex     string `json:"hex"`
	Trace   string `json:"trace"`
	Payload string `json:"payload_hex"` // performatives: the frame's bytes after the performative
	Data    []byte `json:"-"`
}

// Dir returns the path of testdata/proton, found from this file's place
// in the repository, so tests of any package can read it.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "proton")
}

// Load reads one of values.jsonl, messages.jsonl or performatives.jsonl.
func Load(t testing.TB, name string) []Entry {
	t.Helper()
	f, err := os.Open(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e.Data, err = hex.DecodeString(e.Hex); err != nil {
			t.Fatalf("%s %s: %v", name, e.Name, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: empty", name)
	}
	return out
}

// All loads the three files together.
func All(t testing.TB) []Entry {
	var out []Entry
	for _, n := range []string{"values.jsonl", "messages.jsonl", "performatives.jsonl"} {
		out = append(out, Load(t, n)...)
	}
	return out
}
