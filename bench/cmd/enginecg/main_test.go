//go:build proton

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDumps writes, in dir, the dumps callgrind would write for every
// count: I(n) = setup + perMsg*n (+ bend*n when n is the longest length,
// for the engine's small unsettled receive).
func writeDumps(t *testing.T, dir string, bend int64) {
	t.Helper()
	part := 0
	for _, impl := range []string{"engine", "proton"} {
		perMsg := map[string]int64{"engine": 1000, "proton": 5000}[impl]
		for _, d := range []string{"receive", "send"} {
			for _, st := range []string{"small-unsettled", "small-presettled", "medium-unsettled", "medium-presettled"} {
				for _, n := range []int64{1000, 2000, 4000} {
					total := 80_000 + perMsg*n
					if impl == "engine" && d == "receive" && st == "small-unsettled" && n == 4000 {
						total += bend * n
					}
					part++
					dump := fmt.Sprintf("# callgrind format\nversion: 1\npart: %d\n\ndesc: Timerange: Basic block 0 - 1\n"+
						"desc: Trigger: Client Request: %s%s %s %s %d\n\npositions: line\nevents: Ir\nsummary: %d\n\nfn=(1) x\n1 %d\n\ntotals: %d\n",
						part, labelPrefix, impl, d, st, n, total, total, total)
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("cg.%s.%d", impl, part)), []byte(dump), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	// the dump at exit, which is no count
	exit := "desc: Trigger: Program termination\nsummary: 7\ntotals: 7\n"
	if err := os.WriteFile(filepath.Join(dir, "cg.engine"), []byte(exit), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	writeDumps(t, dir, 0)
	var out strings.Builder
	if err := printReport(dir, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| receive | small | unsettled | 1,000 | 5,000 | 5.00x |",
		"| send | medium | presettled | 1,000 | 5,000 | 5.00x |",
		"receive small-unsettled    engine  I(1000)=1,080,000  I(2000)=2,080,000  I(4000)=4,080,000  per msg 1,000 1,000  set-up 80,000",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report has no line %q:\n%s", want, out.String())
		}
	}
}

// TestReportRefuses: counts that do not grow linearly, and missing
// counts, fail the report.
func TestReportRefuses(t *testing.T) {
	dir := t.TempDir()
	writeDumps(t, dir, 11) // 1,000 then 1,022 per message: over 20 and 2%
	err := printReport(dir, new(strings.Builder))
	if err == nil || !strings.Contains(err.Error(), "receive small-unsettled engine") {
		t.Errorf("a bend of 2.2%%: %v", err)
	}
	dir = t.TempDir()
	writeDumps(t, dir, 5) // 1,000 then 1,010: within 20
	if err := printReport(dir, new(strings.Builder)); err != nil {
		t.Errorf("a bend of 10 instructions: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "cg.proton.48")); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"47", "46"} {
		if err := os.Remove(filepath.Join(dir, "cg.proton."+n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := printReport(dir, new(strings.Builder)); err == nil {
		t.Error("no counts for Proton's medium presettled send, and no error")
	}
	if err := printReport(t.TempDir(), new(strings.Builder)); err == nil {
		t.Error("no dumps, and no error")
	}
}

func TestCommas(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999.4: "999", 999.5: "1,000", 1234567: "1,234,567", -4321: "-4,321"} {
		if got := commas(v); got != want {
			t.Errorf("commas(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestProfile: own costs per function, calls' inclusive costs left out,
// per message between the two longest lengths.
func TestProfile(t *testing.T) {
	dir := t.TempDir()
	for i, n := range []int{1000, 2000, 4000} {
		dump := fmt.Sprintf("desc: Trigger: Client Request: %sengine receive small-unsettled %d\nsummary: 1\n"+
			"fn=main.loop\n10 %d\n+1 %d\ncfn=main.leaf\ncalls=%d 20\n12 999999\n"+
			"fn=main.leaf\n20 %d\n", labelPrefix, n, 100+2*n, 3*n, n, 5*n)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("cg.engine.%d", i+1)), []byte(dump), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := printProfile(dir, 5, &out); err != nil {
		t.Fatal(err)
	}
	want := "engine receive small-unsettled: 10 instructions per message (I(4000) - I(2000)) / 2000, by function (own cost)\n" +
		"        5  main.leaf\n        5  main.loop\n\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	compressed := fmt.Sprintf("desc: Trigger: Client Request: %sengine receive small-unsettled 8000\nfn=(3) main.loop\n1 5\n", labelPrefix)
	if err := os.WriteFile(filepath.Join(dir, "cg.engine.4"), []byte(compressed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := printProfile(dir, 5, new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "compress-strings") {
		t.Errorf("compressed names: %v", err)
	}
}
