//go:build proton

// Command enginecg counts, with valgrind's callgrind, the instructions
// amqpsax's engine and Qpid Proton-C's pn_connection_driver take per
// message, receiving (bench.Receivers, fed a client's recorded stream) and
// sending (bench.Senders, fed a server's recorded stream), in memory. Each
// count is one connection of N messages; at two stream lengths the set-up
// (handshake, connection allocated and freed) cancels:
//
//	instructions per message = (I(N2) - I(N1)) / (N2 - N1)
//
// Only the run of the connection is counted: collection is off in the
// program and is turned on and off around the one call that runs the
// connection (callgrind client requests; for Proton that call is the
// cgo call of its C loop), and each count is dumped under its own label.
// engine-perf.sh runs it in three steps:
//
//	enginecg -write streams.gob -lengths 2000,4000,8000   # natively: record and check every run
//	valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=DIR/cg.IMPL \
//		enginecg -read streams.gob -impl IMPL             # for IMPL engine and proton
//	enginecg -report DIR                                  # the table
//
// The counting runs need GOGC=off (no collection counted), GOMAXPROCS=1
// and GODEBUG=asyncpreemptoff=1; the program runs on one locked OS
// thread, and callgrind collects per thread.
package main

/*
#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CG_HAVE 1
#endif
#endif
#ifndef CG_HAVE
#define CG_HAVE 0
#endif

static int cg_have(void) { return CG_HAVE; }

static int cg_running(void) {
#if CG_HAVE
	return RUNNING_ON_VALGRIND;
#else
	return 0;
#endif
}

// cg_start zeroes the counts and turns collection on; cg_stop turns it
// off and dumps the counts under label.
static void cg_start(void) {
#if CG_HAVE
	CALLGRIND_ZERO_STATS;
	CALLGRIND_TOGGLE_COLLECT;
#endif
}

static void cg_stop(const char *label) {
#if CG_HAVE
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_DUMP_STATS_AT(label);
#endif
}
*/
import "C"

import (
	"bufio"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/amqpsax/amqpsax/bench"
)

// labelPrefix starts the label of every count.
const labelPrefix = "enginecg "

// Recorded is what -write records and -read reads back: the streams at
// each length, so that the counting runs under valgrind need not build
// the bench module's workloads (slow there).
type Recorded struct {
	Lengths []int
	Recv    []RecvStream
	Send    []SendStream
}

// RecvStream is a bench.DriverStream without its Workload.
type RecvStream struct {
	Name      string
	Settled   bool
	Msg       []byte
	Data      []byte
	Setup     int
	Msgs      int
	Ends      []int
	Transfers int
}

// SendStream is a bench.SenderStream without its Workload.
type SendStream struct {
	Name    string
	Settled bool
	Msg     []byte
	Msgs    int
	Data    []byte
	Open    int
	Attach  int
	Disps   []int
	Tail    int
}

func (r RecvStream) stream() *bench.DriverStream {
	return &bench.DriverStream{Name: r.Name, Workload: &bench.Workload{Name: r.Name, AMQP: r.Msg}, Settled: r.Settled,
		Data: r.Data, Setup: r.Setup, Msgs: r.Msgs, Ends: r.Ends, Transfers: r.Transfers}
}

func (s SendStream) stream() *bench.SenderStream {
	return &bench.SenderStream{Name: s.Name, Workload: &bench.Workload{Name: s.Name, AMQP: s.Msg}, Settled: s.Settled,
		Msgs: s.Msgs, Data: s.Data, Open: s.Open, Attach: s.Attach, Disps: s.Disps, Tail: s.Tail}
}

func main() {
	write := flag.String("write", "", "record the streams into this file (natively), checking every run")
	lengths := flag.String("lengths", "2000,4000,8000", "with -write: the stream lengths, messages per connection")
	read := flag.String("read", "", "count the runs of the streams in this file (under callgrind)")
	impl := flag.String("impl", "", "with -read: the implementation counted, engine or proton")
	report := flag.String("report", "", "print the table from the callgrind dumps in this directory")
	profile := flag.String("profile", "", "print, per count in the callgrind dumps in this directory, the instructions per message by function")
	top := flag.Int("top", 15, "with -profile: the functions printed per count")
	flag.Parse()
	var err error
	switch {
	case *write != "":
		err = record(*write, *lengths)
	case *read != "":
		err = count(*read, *impl)
	case *report != "":
		err = printReport(*report, os.Stdout)
	case *profile != "":
		err = printProfile(*profile, *top, os.Stdout)
	default:
		err = errors.New("one of -write, -read, -report or -profile")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginecg:", err)
		os.Exit(1)
	}
}

// record writes the streams of every length to file, then runs every
// measurement natively once, checked (messages compared byte for byte,
// what a sender wrote parsed).
func record(file, lengths string) error {
	var rec Recorded
	for _, f := range strings.Split(lengths, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return fmt.Errorf("-lengths: %q", f)
		}
		rec.Lengths = append(rec.Lengths, n)
	}
	if len(rec.Lengths) < 2 || !slices.IsSorted(rec.Lengths) {
		return fmt.Errorf("-lengths %s: two or more, increasing", lengths)
	}
	for _, w := range bench.Workloads() {
		if w.Name != "small" && w.Name != "medium" {
			continue
		}
		for _, settled := range []bool{false, true} {
			for _, n := range rec.Lengths {
				d := bench.RecordStream(w, n, settled)
				rec.Recv = append(rec.Recv, RecvStream{Name: d.Name, Settled: settled, Msg: w.AMQP, Data: d.Data,
					Setup: d.Setup, Msgs: d.Msgs, Ends: d.Ends, Transfers: d.Transfers})
				s := bench.RecordServerStream(w, n, settled)
				rec.Send = append(rec.Send, SendStream{Name: s.Name, Settled: settled, Msg: w.AMQP, Msgs: n, Data: s.Data,
					Open: s.Open, Attach: s.Attach, Disps: s.Disps, Tail: s.Tail})
			}
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := gob.NewEncoder(f).Encode(&rec); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Every run once, natively and checked, from what was written.
	back, err := load(file)
	if err != nil {
		return err
	}
	for _, r := range back.Recv {
		s := r.stream()
		for _, rc := range bench.Receivers {
			run, err := rc.New(s, true)
			if err != nil {
				return err
			}
			res, err := run.Run(s.Msgs)
			run.Close()
			if err == nil {
				err = res.Check(s, s.Msgs)
			}
			if err != nil {
				return fmt.Errorf("receive %s %d %s: %w", s.Name, s.Msgs, rc.Name, err)
			}
		}
	}
	for _, r := range back.Send {
		s := r.stream()
		for _, sc := range bench.Senders {
			run, err := sc.New(s, true)
			if err != nil {
				return err
			}
			res, err := run.Run(s.Msgs)
			run.Close()
			if err == nil {
				err = res.Check(s, s.Msgs)
			}
			if err == nil {
				err = bench.CheckSent(s, s.Msgs, res.Written)
			}
			if err != nil {
				return fmt.Errorf("send %s %d %s: %w", s.Name, s.Msgs, sc.Name, err)
			}
		}
	}
	fmt.Printf("recorded %d receive and %d send streams at lengths %v; every run checked with %d receivers and %d senders\n",
		len(back.Recv), len(back.Send), back.Lengths, len(bench.Receivers), len(bench.Senders))
	return nil
}

func load(file string) (*Recorded, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rec Recorded
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&rec); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &rec, nil
}

// count runs, for impl, every stream's connection twice: once to warm
// (code paged in and bound, stacks and pools grown), then counted.
func count(file, impl string) error {
	if C.cg_have() == 0 {
		return errors.New("built without valgrind's callgrind.h (Debian: apt-get install valgrind): cannot count")
	}
	if C.cg_running() == 0 {
		return errors.New("-read counts under callgrind: valgrind --tool=callgrind --collect-atstart=no ... enginecg -read")
	}
	runtime.LockOSThread()
	rec, err := load(file)
	if err != nil {
		return err
	}
	rc := slices.IndexFunc(bench.Receivers, func(r bench.Receiver) bool { return r.Name == impl })
	sc := slices.IndexFunc(bench.Senders, func(s bench.Sender) bool { return s.Name == impl })
	if rc < 0 || sc < 0 {
		return fmt.Errorf("-impl %q: engine or proton", impl)
	}
	for _, r := range rec.Recv {
		s := r.stream()
		run, err := bench.Receivers[rc].New(s, false)
		if err != nil {
			return err
		}
		var res bench.ReceiverResult
		if _, err = run.Run(s.Msgs); err == nil {
			label := fmt.Sprintf("%s%s receive %s %d", labelPrefix, impl, s.Name, s.Msgs)
			err = measure(label, func() (e error) { res, e = run.Run(s.Msgs); return e })
		}
		run.Close()
		if err == nil {
			err = res.Check(s, s.Msgs)
		}
		if err != nil {
			return fmt.Errorf("receive %s %d: %w", s.Name, s.Msgs, err)
		}
	}
	for _, r := range rec.Send {
		s := r.stream()
		run, err := bench.Senders[sc].New(s, false)
		if err != nil {
			return err
		}
		var res bench.SenderResult
		if _, err = run.Run(s.Msgs); err == nil {
			label := fmt.Sprintf("%s%s send %s %d", labelPrefix, impl, s.Name, s.Msgs)
			err = measure(label, func() (e error) { res, e = run.Run(s.Msgs); return e })
		}
		run.Close()
		if err == nil {
			err = res.Check(s, s.Msgs)
		}
		if err != nil {
			return fmt.Errorf("send %s %d: %w", s.Name, s.Msgs, err)
		}
	}
	return nil
}

// measure counts f alone: collection on just before, off just after,
// dumped under label.
func measure(label string, f func() error) error {
	cl := C.CString(label)
	defer C.free(unsafe.Pointer(cl))
	// What the warm run allocated is garbage now: collected and swept
	// here, so the counted run allocates from a heap in the same state
	// every time (GOGC=off: no collection starts by itself).
	runtime.GC()
	C.cg_start()
	err := f()
	C.cg_stop(cl)
	fmt.Println("counted", label)
	return err
}

// A key names one count but its length.
type key struct{ impl, dir, stream string }

// printReport reads the dumps (DIR/cg.*.N), then prints per direction,
// stream and implementation the instructions per message between each
// pair of consecutive lengths, and the table: per stream, the engine's
// and Proton's instructions per message between the two longest lengths,
// and their ratio. It fails when a count is missing, or when the
// per-message counts of two pairs of lengths differ by more than
// tolerance (a count that did not grow linearly with the stream measured
// something else than messages).
func printReport(dir string, w io.Writer) error {
	files, err := filepath.Glob(filepath.Join(dir, "cg.*"))
	if err != nil {
		return err
	}
	counts := map[key]map[int]int64{}
	for _, f := range files {
		label, total, ok, err := readDump(f)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var k key
		var n int
		if _, err := fmt.Sscanf(label, "%s %s %s %d", &k.impl, &k.dir, &k.stream, &n); err != nil {
			return fmt.Errorf("%s: label %q: %w", f, label, err)
		}
		if counts[k] == nil {
			counts[k] = map[int]int64{}
		}
		counts[k][n] = total
	}
	if len(counts) == 0 {
		return fmt.Errorf("no counts in %s", dir)
	}
	var keys []key
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return strings.Compare(a.dir+" "+a.stream+" "+a.impl, b.dir+" "+b.stream+" "+b.impl)
	})
	perMsg := map[key]float64{}
	var bad []string
	fmt.Fprintln(w, "instructions per connection (callgrind), and per message between consecutive lengths:")
	for _, k := range keys {
		ns := slices.Sorted(func(yield func(int) bool) {
			for n := range counts[k] {
				if !yield(n) {
					return
				}
			}
		})
		if len(ns) < 2 {
			return fmt.Errorf("%v: counts at %v only; two lengths or more", k, ns)
		}
		line := fmt.Sprintf("  %-7s %-18s %-6s", k.dir, k.stream, k.impl)
		var per []float64
		for i, n := range ns {
			line += fmt.Sprintf("  I(%d)=%s", n, commas(float64(counts[k][n])))
			if i > 0 {
				per = append(per, float64(counts[k][n]-counts[k][ns[i-1]])/float64(n-ns[i-1]))
			}
		}
		last := per[len(per)-1]
		setup := float64(counts[k][ns[0]]) - last*float64(ns[0])
		line += "  per msg"
		for _, p := range per {
			line += " " + commas(p)
		}
		line += "  set-up " + commas(setup)
		for _, p := range per[:len(per)-1] {
			if d := p - last; d > tolerance(last) || -d > tolerance(last) {
				bad = append(bad, fmt.Sprintf("%s %s %s: %.1f and %.1f instructions per message at two pairs of lengths", k.dir, k.stream, k.impl, p, last))
			}
		}
		fmt.Fprintln(w, line)
		perMsg[k] = last
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| direction | workload | mode | engine instr/msg | Proton instr/msg | Proton ÷ engine |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | ---: | ---: |")
	for _, dir := range []string{"receive", "send"} {
		for _, st := range []string{"small-unsettled", "small-presettled", "medium-unsettled", "medium-presettled"} {
			e, okE := perMsg[key{"engine", dir, st}]
			p, okP := perMsg[key{"proton", dir, st}]
			if !okE || !okP {
				return fmt.Errorf("%s %s: no count for the engine or Proton", dir, st)
			}
			wl, mode, _ := strings.Cut(st, "-")
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2fx |\n", dir, wl, mode, commas(e), commas(p), p/e)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("not linear in the stream length:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// printProfile prints, for each count in dir's dumps (written with
// --compress-strings=no), the instructions per message of the top
// functions by their own cost (not their callees'), between the two
// longest lengths, and their sum over every function.
func printProfile(dir string, top int, w io.Writer) error {
	files, err := filepath.Glob(filepath.Join(dir, "cg.*"))
	if err != nil {
		return err
	}
	byLen := map[key]map[int]string{}
	for _, f := range files {
		label, _, ok, err := readDump(f)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var k key
		var n int
		if _, err := fmt.Sscanf(label, "%s %s %s %d", &k.impl, &k.dir, &k.stream, &n); err != nil {
			return fmt.Errorf("%s: label %q: %w", f, label, err)
		}
		if byLen[k] == nil {
			byLen[k] = map[int]string{}
		}
		byLen[k][n] = f
	}
	var keys []key
	for k := range byLen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return strings.Compare(a.dir+" "+a.stream+" "+a.impl, b.dir+" "+b.stream+" "+b.impl)
	})
	for _, k := range keys {
		var ns []int
		for n := range byLen[k] {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		if len(ns) < 2 {
			return fmt.Errorf("%v: counts at %v only; two lengths or more", k, ns)
		}
		n1, n2 := ns[len(ns)-2], ns[len(ns)-1]
		c1, err := selfCosts(byLen[k][n1])
		if err != nil {
			return err
		}
		c2, err := selfCosts(byLen[k][n2])
		if err != nil {
			return err
		}
		type fnCost struct {
			fn  string
			per float64
		}
		var fns []fnCost
		var sum float64
		for fn := range mapKeys(c1, c2) {
			per := float64(c2[fn]-c1[fn]) / float64(n2-n1)
			sum += per
			fns = append(fns, fnCost{fn, per})
		}
		slices.SortFunc(fns, func(a, b fnCost) int {
			if a.per != b.per {
				return int(sign(b.per - a.per))
			}
			return strings.Compare(a.fn, b.fn)
		})
		fmt.Fprintf(w, "%s %s %s: %s instructions per message (I(%d) - I(%d)) / %d, by function (own cost)\n",
			k.impl, k.dir, k.stream, commas(sum), n2, n1, n2-n1)
		for _, f := range fns[:min(top, len(fns))] {
			fmt.Fprintf(w, "  %7s  %s\n", commas(f.per), f.fn)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// mapKeys yields the keys of a and then those of b not in a.
func mapKeys(a, b map[string]int64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range a {
			if !yield(k) {
				return
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok && !yield(k) {
				return
			}
		}
	}
}

// selfCosts returns the instructions of each function of one dump, its
// own (the cost lines under fn=, not the inclusive cost of the calls it
// makes, which follows each calls= line).
func selfCosts(file string) (map[string]int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	costs := map[string]int64{}
	fn, call := "", false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "fn="):
			fn = line[len("fn="):]
			if strings.HasPrefix(fn, "(") {
				return nil, fmt.Errorf("%s: compressed names (%q): count with --compress-strings=no", file, line)
			}
		case strings.HasPrefix(line, "calls="):
			call = true
		case line != "" && (line[0] >= '0' && line[0] <= '9' || line[0] == '+' || line[0] == '-' || line[0] == '*'):
			if call {
				call = false
				continue
			}
			fields := strings.Fields(line)
			v, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", file, line, err)
			}
			costs[fn] += v
		}
	}
	return costs, sc.Err()
}

// tolerance is how far apart two per-message counts of one stream may be:
// 2%, or 20 instructions where that is more. The set-up of a connection
// varies by a few thousand instructions from count to count (the Go
// runtime's page allocator finds its spans in a heap in another state),
// which is 10 per message at 1000 messages.
func tolerance(perMsg float64) float64 { return max(0.02*perMsg, 20) }

// readDump returns the label and the total instruction count of one
// callgrind dump written by measure (ok false for any other dump: the
// one at exit).
func readDump(file string) (label string, total int64, ok bool, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, found := strings.CutPrefix(line, "desc: Trigger: Client Request: "); found {
			label, ok = strings.CutPrefix(rest, labelPrefix)
		}
		for _, p := range []string{"summary: ", "totals: "} {
			if rest, found := strings.CutPrefix(line, p); found {
				v, _, _ := strings.Cut(rest, " ")
				if total, err = strconv.ParseInt(v, 10, 64); err != nil {
					return "", 0, false, fmt.Errorf("%s: %q: %w", file, line, err)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, false, err
	}
	return label, total, ok, nil
}

// commas formats v rounded, with thousands separators.
func commas(v float64) string {
	s := strconv.FormatInt(int64(v+0.5*sign(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}
