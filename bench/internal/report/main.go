// Command report turns the output of the bench module's benchmarks into
// RESULTS.md: per task, a table of every workload × implementation
// (median ns/op with benchstat's 95% confidence interval, MB/s, B/op,
// allocs/op), then the ratio of each peer's time to each of ours.
//
//	go run ./internal/report -in results/bench.txt -meta results/meta.txt > RESULTS.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

type key struct{ task, workload, impl string }

type stats struct {
	ns             benchmath.Summary
	mbs            float64
	bytes, allocs  float64
	n              int
	haveMBs, haveB bool
}

func main() {
	in := flag.String("in", "results/bench.txt", "raw go test -bench output")
	meta := flag.String("meta", "", "file of machine and run details, copied verbatim")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	samples := map[key]map[string][]float64{}
	var order []key
	var tasks, workloads []string
	r := benchfmt.NewReader(f, *in)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		k, ok := parseName(res.Name)
		if !ok {
			continue
		}
		if samples[k] == nil {
			samples[k] = map[string][]float64{}
			order = append(order, k)
			if !slices.Contains(tasks, k.task) {
				tasks = append(tasks, k.task)
			}
			if !slices.Contains(workloads, k.workload) && k.task != "FrameRead" {
				workloads = append(workloads, k.workload) // the summary's columns
			}
		}
		for _, v := range res.Values {
			unit, val := v.OrigUnit, v.OrigValue
			if unit == "" {
				unit, val = v.Unit, v.Value
			}
			samples[k][unit] = append(samples[k][unit], val)
		}
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}

	st := map[key]stats{}
	for _, k := range order {
		s := samples[k]
		var x stats
		ns := benchmath.NewSample(s["ns/op"], &benchmath.DefaultThresholds)
		x.ns = benchmath.AssumeNothing.Summary(ns, 0.95)
		x.n = len(s["ns/op"])
		if v := s["MB/s"]; len(v) > 0 {
			x.mbs, x.haveMBs = median(v), true
		}
		if v := s["B/op"]; len(v) > 0 {
			x.bytes, x.allocs, x.haveB = median(v), median(s["allocs/op"]), true
		}
		st[k] = x
	}

	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	header(w, *meta)
	summary(w, workloads, st)
	for _, task := range tasks {
		fmt.Fprintf(w, "\n## %s\n\n%s\n\n", task, taskDoc[task])
		fmt.Fprintln(w, "| workload | impl | ns/op | ± | MB/s | B/op | allocs/op |")
		fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: |")
		for _, wl := range taskWorkloads(task, order) {
			for _, k := range order {
				if k.task != task || k.workload != wl {
					continue
				}
				x := st[k]
				impl := k.impl
				if ours(impl) {
					impl = "**" + impl + "**"
				}
				fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", wl, impl,
					num(x.ns.Center), x.ns.PctRangeString(), mbs(x), b(x, x.bytes), b(x, x.allocs))
			}
		}
		ratios(w, task, taskWorkloads(task, order), order, st)
	}
}

// taskWorkloads returns the workloads of task's benchmarks, in the order
// they ran.
func taskWorkloads(task string, order []key) []string {
	var wls []string
	for _, k := range order {
		if k.task == task && !slices.Contains(wls, k.workload) {
			wls = append(wls, k.workload)
		}
	}
	return wls
}

// ratios writes, for each workload and each peer, the peer's ns/op over
// each of ours: above 1 we are faster, below 1 (in bold) we are slower.
func ratios(w io.Writer, task string, workloads []string, order []key, st map[key]stats) {
	var oursCols []string
	for _, k := range order {
		if k.task == task && ours(k.impl) && !slices.Contains(oursCols, k.impl) {
			oursCols = append(oursCols, k.impl)
		}
	}
	var rows [][2]string
	for _, wl := range workloads {
		for _, k := range order {
			if k.task == task && k.workload == wl && !ours(k.impl) {
				rows = append(rows, [2]string{wl, k.impl})
			}
		}
	}
	if len(rows) == 0 || len(oursCols) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s: peer ns/op ÷ ours (how many times faster ours is; **bold** where ours is slower).\n\n", task)
	fmt.Fprintf(w, "| workload | peer | %s |\n", strings.Join(oursCols, " | "))
	fmt.Fprintf(w, "| --- | --- |%s\n", strings.Repeat(" ---: |", len(oursCols)))
	for _, row := range rows {
		peer := st[key{task, row[0], row[1]}]
		fmt.Fprintf(w, "| %s | %s |", row[0], row[1])
		for _, o := range oursCols {
			x, ok := st[key{task, row[0], o}]
			if !ok {
				fmt.Fprint(w, " |")
				continue
			}
			fmt.Fprintf(w, " %s |", ratioCell(peer.ns.Center/x.ns.Center))
		}
		fmt.Fprintln(w)
	}
}

// pairs are the like-for-like comparisons: a peer and the implementation
// of ours that does the same work.
var pairs = []struct{ task, peer, ours, why string }{
	{"Decode", "goamqp", "dispatch-keep", "both build a tree of Go values"},
	{"Decode", "goamqp", "stream-typed", "both decode the body into typed Go values ([]int64, []string; for the map go-amqp makes map[string]any, ours map[string]string)"},
	{"Decode", "proton-message", "dispatch-keep", "both copy every value out of the input (Proton into storage it reuses, the keeper into new Go values)"},
	{"Decode", "proton-message", "stream-walk", "neither allocates per value"},
	{"Decode", "proton-message", "message-owned", "both decode the whole message into storage they own and reuse: header and properties as fields, the rest kept (Proton copies every section; message-owned copies the input once, then views)"},
	{"Decode", "proton-message", "message-nocopy", "as message-owned, with the input handed over instead of copied"},
	{"Decode", "goamqp", "message-owned", "both give a whole message that outlives the input"},
	{"Decode", "proton-data", "stream-walk", "both read every value with a getter"},
	{"Decode", "msgp-zc", "stream-views", "both read every string of a body of known shape as a view"},
	{"Decode", "msgp-zc", "stream-walk", "both read every value, strings as views (stream-walk not knowing the shape)"},
	{"Decode", "msgp-typed", "stream-typed", "both decode into []string / map[string]string"},
	{"Decode", "json-typed", "stream-typed", "both decode into []string / map[string]string"},
	{"Decode", "json-any", "dispatch-keep", "both build a tree of Go values"},
	{"Skip", "msgp", "stream", "both step over the whole input"},
	{"Encode", "goamqp", "append", "both encode from Go values"},
	{"Encode", "proton-message", "append", "both encode from their in-memory form"},
	{"Encode", "proton-message", "message-build", "both encode a message they decoded once"},
	{"Encode", "goamqp", "message-build", "both encode a whole message from their in-memory form (go-amqp's is Go values)"},
	{"Encode", "goamqp", "message-build-map", "both encode header and properties from structs, the application properties from a map[string]any and a data body"},
	{"Encode", "msgp-typed", "append-typed", "both encode []string / map[string]string"},
	{"Encode", "json-typed", "append-typed", "both encode []string / map[string]string"},
	{"Route", "goamqp", "stream", "the same two fields"},
	{"Route", "proton-message", "stream", "the same two fields"},
	{"Route", "goamqp", "message", "the same two fields (message.Scan, ParseProperties, Lookup)"},
	{"AppProps", "goamqp", "message-map", "both give the application properties as a map[string]any"},
	{"FrameTransfer", "goamqp-route", "amqpsax-route", "both read properties.to and one application property from a transfer frame's body"},
}

// summary writes the like-for-like ratios: one row per pair, one column
// per workload.
func summary(w io.Writer, workloads []string, st map[key]stats) {
	fmt.Fprint(w, "\n## Summary: like for like\n\n")
	fmt.Fprintln(w, "Peer ns/op ÷ ours ns/op for implementations doing the same work: above 1 ours is that many")
	fmt.Fprint(w, "times faster; **bold** where ours is slower. Empty where the pair does not apply.\n\n")
	fmt.Fprintf(w, "| task | peer | ours | %s |\n", strings.Join(workloads, " | "))
	fmt.Fprintf(w, "| --- | --- | --- |%s\n", strings.Repeat(" ---: |", len(workloads)))
	for _, p := range pairs {
		var cells []string
		found := false
		for _, wl := range workloads {
			a, ok1 := st[key{p.task, wl, p.peer}]
			o, ok2 := st[key{p.task, wl, p.ours}]
			if !ok1 || !ok2 {
				cells = append(cells, "")
				continue
			}
			found = true
			cells = append(cells, ratioCell(a.ns.Center/o.ns.Center))
		}
		if found {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", p.task, p.peer, p.ours, strings.Join(cells, " | "))
		}
	}
	fmt.Fprintln(w)
	for _, p := range pairs {
		fmt.Fprintf(w, "- %s %s vs %s: %s.\n", p.task, p.peer, p.ours, p.why)
	}
}

func ratioCell(r float64) string {
	cell := fmt.Sprintf("%.2f×", r)
	if r >= 100 {
		cell = fmt.Sprintf("%.0f×", r)
	}
	if r < 1 {
		cell = "**" + cell + "**"
	}
	return cell
}

var taskDoc = map[string]string{
	"FrameRead": "Read every frame of a connection's byte stream, as a broker does first: the two sides of " +
		"Proton's connection in testdata/proton, and generated streams of transfers. `reader`: " +
		"`frame.Reader.Next` alone. `loop`: a broker's receiving loop (`Next`, `Performative`, " +
		"`ParseTransfer`, `Assembler.Add`). results/bench.txt has frames/s too. go-amqp keeps its frame " +
		"reader internal, so it has no counterpart here.",
	"FrameTransfer": "Decode one transfer frame's body carrying the workload's message. `amqpsax-parse`: " +
		"`frame.ParseTransfer` (handle, delivery-id, tag, settled; the payload a view). `amqpsax-route`: " +
		"that, then properties.to and the application property \"tenant\" with package message. " +
		"`amqpsax-keep`: that, then every value of the message as Go values. `goamqp-route`: go-amqp's " +
		"performative decoder is internal, so its `Message.UnmarshalBinary` of the payload, then the same " +
		"two fields.",
	"AppProps": "Turn the application properties into a Go map of plain values, as a user who wants Go " +
		"values does. `goamqp`: Azure/go-amqp `Message.UnmarshalBinary`, then `ApplicationProperties` " +
		"(it decodes the whole message: it has no other way). `message-map`: `message.Scan`, then " +
		"`message.Map` of the one section.",
	"Decode": "Read the whole message. `goamqp`: Azure/go-amqp `Message.UnmarshalBinary`. " +
		"`dispatch-nop`: push decoder, no-op Handler. `dispatch-keep`: push decoder with a Handler that " +
		"keeps every value as a Go value (strings copied, numbers boxed, maps built), the same kind of tree " +
		"go-amqp builds. `stream-walk`: pull cursor visiting every value and reading it with its getter. " +
		"`stream-typed`: cursor decoding the body into []string / map[string]string / []int64. " +
		"`stream-views`: cursor reading every string of the mobile body as a view, knowing its shape. " +
		"`message-owned`: `message.Message.Decode` into a reused Message (one copy of the input, views into it). " +
		"`message-nocopy`: `DecodeNoCopy`, the same sharing the input. " +
		"`proton-message`: Proton-C `pn_message_decode`. `proton-data`: Proton-C `pn_data_decode` of every " +
		"section plus a walk of the whole `pn_data_t` tree with its getters. Mobile shapes only: `json-any` / " +
		"`json-typed` (encoding/json into `any` / []string, map[string]string), `msgp-zc` (tinylib/msgp " +
		"`ReadStringZC`, no copy), `msgp-typed` (`ReadStringBytes` into []string, map[string]string); " +
		"their MB/s is of their own input (JSON or MessagePack), which is a little larger or smaller.",
	"Skip": "Step over the message's top-level values without reading them. `stream`: `Next` at the top " +
		"level. `dispatch`: a Handler returning `SkipValue` from `OnDescribedStart`. `msgp`: `msgp.Skip` of " +
		"the MessagePack body (it has to walk every element: MessagePack compounds carry no size). " +
		"`message-scan`: `message.Scan`, which also checks section order and types.",
	"Encode": "Write the message. `goamqp`: `Message.MarshalBinary` of a decoded Message. `dispatch-writer`: " +
		"decode and re-encode (dispatch into `encode.Writer`). `append`: the Append functions from the Go values " +
		"(a tree of `any`, as go-amqp's Message holds). `append-typed`: the body alone from []string / " +
		"map[string]string, like `json-typed` (`json.Marshal`) and `msgp-typed` (msgp `Append*`). " +
		"`proton-message`: `pn_message_encode` of a decoded message. `message-build`: `message.Message.Append` " +
		"of a Message decoded once. `message-build-map`: the same with the application properties built from a " +
		"map[string]any on every run (`Values.PropertiesOf`; data bodies only).",
	"Route": "Read `properties.to` and the application property `tenant`. `stream`: cursor, skipping " +
		"everything else. `dispatch`: Handler returning `SkipValue` for other sections and `SkipAll` once " +
		"both are found. `message`: `message.Scan`, `ParseProperties` and `Lookup`. `goamqp` and `proton-message` have no way to skip: they decode the whole message, then read " +
		"the two fields.",
}

// ours reports whether impl is one of amqpsax's.
func ours(impl string) bool {
	return strings.HasPrefix(impl, "dispatch") || strings.HasPrefix(impl, "stream") ||
		strings.HasPrefix(impl, "append") || strings.HasPrefix(impl, "message") ||
		strings.HasPrefix(impl, "amqpsax") || impl == "reader" || impl == "loop"
}

// parseName splits "Decode/workload=small/impl=goamqp-2" (or, for
// FrameRead, "FrameRead/conn=proton-client/impl=reader-2").
func parseName(n benchfmt.Name) (key, bool) {
	base, parts := n.Parts()
	var k key
	k.task = string(base)
	for _, p := range parts {
		if v, ok := strings.CutPrefix(string(p), "/workload="); ok {
			k.workload = v
		} else if v, ok := strings.CutPrefix(string(p), "/conn="); ok { // FrameRead: a connection's stream
			k.workload = v
		} else if v, ok := strings.CutPrefix(string(p), "/impl="); ok {
			k.impl = v
		}
	}
	return k, k.workload != "" && k.impl != ""
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// num formats ns/op with three significant digits.
func num(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gµs", v/1e3)
	}
	return fmt.Sprintf("%.3gns", v)
}

func mbs(x stats) string {
	if !x.haveMBs {
		return ""
	}
	if x.mbs >= 1e5 {
		return fmt.Sprintf("%.3g", x.mbs)
	}
	return fmt.Sprintf("%.0f", x.mbs)
}

func b(x stats, v float64) string {
	if !x.haveB {
		return ""
	}
	return fmt.Sprintf("%.0f", math.Round(v))
}

func header(w io.Writer, meta string) {
	fmt.Fprintln(w, "# amqpsax benchmark results")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written by `bench/run.sh` (do not edit by hand). ns/op is the median of the runs with")
	fmt.Fprintln(w, "benchstat's 95% confidence interval (±); MB/s, B/op and allocs/op are medians. Names in")
	fmt.Fprintln(w, "**bold** are amqpsax's. The raw output is in `results/bench.txt`, benchstat's own tables")
	fmt.Fprintln(w, "in `results/benchstat.txt`.")
	if meta != "" {
		m, err := os.ReadFile(meta)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "```")
		fmt.Fprint(w, strings.TrimRight(string(m), "\n")+"\n")
		fmt.Fprintln(w, "```")
	}
}
