package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/cmd/internal/dump"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/amqpdump")

// goldenCases run amqpdump from the repository root; each one's output is
// compared with testdata/amqpdump/<name>.golden.
var goldenCases = []struct {
	name  string
	args  []string
	stdin string // a file fed to standard input, when set
}{
	{"frames-client", []string{"-frames", "testdata/proton/conn-client.bin"}, ""},
	{"frames-server", []string{"-frames", "testdata/proton/conn-server.bin"}, ""},
	{"frames-client-offsets", []string{"-frames", "-o", "testdata/proton/conn-client.bin"}, ""},
	{"frames-client-trunc", []string{"-frames", "testdata/proton/conn-client-trunc.bin"}, ""},
	{"frames-bad-doff", []string{"-frames", "-x", "testdata/amqpdump/bad-doff.hex"}, ""},
	{"all-sections-offsets", []string{"-o", "testdata/amqpdump/all-sections.amqp"}, ""},
	{"application-properties-hex", []string{"-x", "testdata/amqpdump/application-properties.hex"}, ""},
	{"bodies-hex-stdin", []string{"-x"}, "testdata/amqpdump/bodies.hex"},
	{"bad-truncated", []string{"-x", "testdata/amqpdump/bad-truncated.hex"}, ""},
	{"bad-code-offsets", []string{"-x", "-o", "testdata/amqpdump/bad-code.hex"}, ""},
	{"bad-hex", []string{"-x", "testdata/amqpdump/all-sections.amqp"}, ""},
	{"frames-client-json", []string{"-frames", "-json", "testdata/proton/conn-client.bin"}, ""},
	{"frames-server-json", []string{"-frames", "-json", "testdata/proton/conn-server.bin"}, ""},
	{"all-sections-json", []string{"-json", "testdata/amqpdump/all-sections.amqp"}, ""},
	{"frames-bad-goes-on", []string{"-frames", "-x", "-o", "testdata/amqpdump/bad-frames.hex"}, ""},
	{"refuse-frames", []string{"testdata/proton/conn-client.bin"}, ""},
	{"pcap", []string{"-pcap", "testdata/amqpdump/proton.pcap"}, ""},
	{"zero-width", []string{"-x", "testdata/amqpdump/zero-width.hex"}, ""},
	{"empty-arrays", []string{"-x", "testdata/amqpdump/empty-arrays.hex"}, ""},
	// Times (the capture's are known), filters, summaries, JSON.
	{"pcap-time", []string{"-pcap", "-time", "abs,rel", "-only", "header,open,begin,attach,transfer,disposition,close,heartbeat", "testdata/amqpdump/proton.pcap"}, ""},
	{"pcap-time-rel-json", []string{"-pcap", "-json", "-time", "rel", "-only", "detach,end,close", "testdata/amqpdump/proton.pcap"}, ""},
	{"pcap-only", []string{"-pcap", "-only", "transfer,disposition", "testdata/amqpdump/proton.pcap"}, ""},
	{"pcap-link", []string{"-pcap", "-time", "rel", "-link", "amqpsax-receiver", "testdata/amqpdump/proton.pcap"}, ""},
	{"pcap-handle-channel", []string{"-pcap", "-handle", "0", "-channel", "1", "testdata/amqpdump/proton.pcap"}, ""},
	{"pcap-delivery", []string{"-pcap", "-delivery", "2", "-only", "transfer,disposition", "testdata/amqpdump/proton.pcap"}, ""},
	{"pcap-summary", []string{"-pcap", "-summary", "testdata/amqpdump/proton.pcap"}, ""},
	{"pcap-summary-json", []string{"-pcap", "-summary", "-json", "testdata/amqpdump/proton.pcap"}, ""},
	{"frames-summary", []string{"-frames", "-summary", "testdata/proton/conn-client.bin"}, ""},
	{"frames-client-plain-json", []string{"-frames", "-json", "-plain", "testdata/proton/conn-client.bin"}, ""},
	{"bodies-json", []string{"-x", "-json", "testdata/amqpdump/bodies.hex"}, ""},
	{"frames-bad-json", []string{"-frames", "-x", "-json", "testdata/amqpdump/bad-frames.hex"}, ""},
	{"bad-code-json", []string{"-x", "-json", "testdata/amqpdump/bad-code.hex"}, ""},
}

// result is one run of amqpdump.
type result struct {
	stdout, stderr string
	status         int
}

// runTool runs amqpdump with args, and the file stdin (if any) as
// standard input, from the current directory.
func runTool(t *testing.T, args []string, stdin string) result {
	t.Helper()
	in := []byte{}
	if stdin != "" {
		var err error
		in, err = os.ReadFile(stdin)
		require.NoError(t, err)
	}
	var out, errOut bytes.Buffer
	status := run(args, bytes.NewReader(in), &out, &errOut)
	return result{out.String(), errOut.String(), status}
}

// transcript formats a run as the golden files hold it: the command,
// standard output, standard error when there is any, and the exit status.
func transcript(args []string, stdin string, r result) string {
	var b strings.Builder
	b.WriteString("$ amqpdump " + strings.Join(args, " "))
	if stdin != "" {
		b.WriteString(" < " + stdin)
	}
	b.WriteString("\n" + r.stdout)
	if r.stderr != "" {
		b.WriteString("[stderr]\n" + r.stderr)
	}
	fmt.Fprintf(&b, "[exit status %d]\n", r.status)
	return b.String()
}

// TestGolden runs amqpdump on the bundled samples and compares its whole
// output with the golden files; go test -update rewrites them.
func TestGolden(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			got := transcript(tc.args, tc.stdin, runTool(t, tc.args, tc.stdin))
			path := filepath.Join("testdata", "amqpdump", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to create it")
			assert.Equal(t, string(want), got)
		})
	}
}

// streamItem is one line of testdata/proton/conn-*-frames.jsonl.
type streamItem struct {
	Kind         string  `json:"kind"`
	Offset       int     `json:"offset"`
	Size         int     `json:"size"`
	Doff         int     `json:"doff"`
	Type         int     `json:"type"`
	Channel      int     `json:"channel"`
	Performative *string `json:"performative"`
	Hex          string  `json:"hex"`
}

// loadStream reads testdata/proton/conn-<side>-frames.jsonl.
func loadStream(t *testing.T, side string) []streamItem {
	t.Helper()
	f, err := os.Open(filepath.Join(corpus.Dir(), "conn-"+side+"-frames.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var items []streamItem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var it streamItem
		require.NoError(t, json.Unmarshal(sc.Bytes(), &it))
		items = append(items, it)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, items)
	return items
}

var (
	frameLine  = regexp.MustCompile(`^frame (\d+) at (\d+): size (\d+), doff (\d+), type (\d+) \(\w+\), channel (\d+): (.*)$`)
	headerLine = regexp.MustCompile(`^protocol header at (\d+): AMQP (\d) (\d)\.(\d)\.(\d) \(\w+\)$`)
)

// TestFramesMatchProton: -frames finds every protocol header and frame of
// Proton's two connection streams, with the header fields and performative
// that Proton's generator recorded, and decodes all of them.
func TestFramesMatchProton(t *testing.T) {
	for _, side := range []string{"client", "server"} {
		t.Run(side, func(t *testing.T) {
			dir := corpus.Dir()
			r := runTool(t, []string{"-frames", filepath.Join(dir, "conn-"+side+".bin")}, "")
			require.Equal(t, 0, r.status, r.stderr)
			require.Empty(t, r.stderr)

			var want []string
			frames := 0
			for _, it := range loadStream(t, side) {
				if it.Kind == "protocol-header" {
					want = append(want, fmt.Sprintf("header %d %s", it.Offset, it.Hex[8:]))
					continue
				}
				frames++
				perf := "empty (heartbeat)"
				if it.Performative != nil {
					perf = *it.Performative
				}
				want = append(want, fmt.Sprintf("frame %d %d %d %d %d %d %s",
					frames, it.Offset, it.Size, it.Doff, it.Type, it.Channel, perf))
			}

			var got []string
			gotFrames := 0
			for _, line := range strings.Split(r.stdout, "\n") {
				if m := headerLine.FindStringSubmatch(line); m != nil {
					got = append(got, fmt.Sprintf("header %s 0%s0%s0%s0%s", m[1], m[2], m[3], m[4], m[5]))
				} else if m := frameLine.FindStringSubmatch(line); m != nil {
					gotFrames++
					got = append(got, "frame "+strings.Join(m[1:], " "))
				}
			}
			assert.Equal(t, frames, gotFrames, "frames")
			assert.Equal(t, want, got)
		})
	}
}

// TestTruncatedStream: on a stream cut in the middle of a frame, the
// output up to that frame is exactly the output for the whole stream, and
// the error names the frame and its offset.
func TestTruncatedStream(t *testing.T) {
	dir := corpus.Dir()
	full := runTool(t, []string{"-frames", filepath.Join(dir, "conn-client.bin")}, "")
	cut := runTool(t, []string{"-frames", filepath.Join(dir, "conn-client-trunc.bin")}, "")
	assert.Equal(t, 1, cut.status)
	assert.Equal(t, "amqpdump: frame 5 at offset 161: truncated: size 111, doff 2, type 0 (AMQP), channel 0, only 55 bytes present (the input ends at offset 216)\n", cut.stderr)
	i := strings.Index(full.stdout, "frame 5 at 161")
	require.Positive(t, i)
	assert.Equal(t, full.stdout[:i], cut.stdout)
}

// TestStreamCutEverywhere: a connection stream cut at any byte prints a
// prefix of the whole stream's output and, unless the cut falls between
// frames, reports one fault: a *dump.FrameError for the frame cut short,
// or an *amqpsax.Error for a message cut short (the transfer that ends
// it has no more flag: its delivery is whole, its message is not).
func TestStreamCutEverywhere(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus.Dir(), "conn-server.bin"))
	require.NoError(t, err)
	whole := dumpBytes(t, data, true)
	require.Empty(t, whole.faults)
	between := map[int]bool{}
	for _, it := range loadStream(t, "server") {
		between[it.Offset] = true
	}
	for cut := range len(data) {
		r := dumpBytes(t, data[:cut], true)
		assert.True(t, strings.HasPrefix(whole.out, r.out), "cut %d", cut)
		if between[cut] || cut == 0 {
			assert.Empty(t, r.faults, "cut %d", cut)
			continue
		}
		if assert.Len(t, r.faults, 1, "cut %d", cut) {
			var fe *dump.FrameError
			assert.ErrorAs(t, r.faults[0], &fe, "cut %d", cut)
		}
	}
}

type dumped struct {
	out    string
	err    error   // values: the fault that stopped the walk
	faults []error // frames: every fault reported
}

// dumpBytes prints data as amqpdump does, as a frame stream or as values.
func dumpBytes(t testing.TB, data []byte, frames bool) dumped {
	t.Helper()
	var b bytes.Buffer
	out := dump.NewOut(&b)
	var r dumped
	opts := dump.Options{OnFault: func(err error) { r.faults = append(r.faults, err) }, MaxMessageSize: len(data) + 1}
	if frames {
		dump.NewStream(out, opts).WriteAll(data)
	} else {
		r.err = dump.NewValues(out, opts).Print(data)
	}
	require.NoError(t, out.Flush())
	r.out = b.String()
	return r
}

// TestErrorsMatchDispatch: on malformed values amqpdump fails with the
// cause, format code and offset package dispatch reports: for the shared
// table of bad inputs, and for every message and performative of the
// Proton corpus cut at every byte.
func TestErrorsMatchDispatch(t *testing.T) {
	check := func(name string, data []byte) {
		t.Helper()
		checkLikeDispatch(t, name, data)
	}
	for _, c := range cases.Invalid {
		check(c.Name, cases.Bytes(c.Hex))
	}
	for _, c := range cases.Valid {
		check(c.Name, cases.Bytes(c.Hex))
	}
	for _, file := range []string{"messages.jsonl", "performatives.jsonl"} {
		for _, e := range corpus.Load(t, file) {
			if len(e.Data) > 2000 {
				continue
			}
			for cut := range len(e.Data) + 1 {
				check(e.Name+"["+strconv.Itoa(cut)+"]", e.Data[:cut])
			}
		}
	}
}

// checkLikeDispatch checks that printing the values of data fails as
// dispatch.DecodeAll does: with the same cause, code and offset, or not at
// all.
func checkLikeDispatch(t *testing.T, name string, data []byte) {
	t.Helper()
	var d dispatch.Decoder
	want := d.DecodeAll(data, amqpsax.NopHandler{})
	got := dumpBytes(t, data, false).err
	if want == nil {
		assert.NoError(t, got, name)
		return
	}
	var we, ge *amqpsax.Error
	require.True(t, errors.As(want, &we), "%s: %v", name, want)
	if assert.True(t, errors.As(got, &ge), "%s: %v", name, got) {
		assert.Equal(t, *we, amqpsax.Error{Op: "dispatch", Offset: ge.Offset, Code: ge.Code, HasCode: ge.HasCode, Err: ge.Err}, name)
	}
}

// TestDepthLikeDispatch: nesting up to the limit prints, deeper fails at
// the offset dispatch reports, for lists, described values, and the
// elements of arrays of described values (a level of their own).
func TestDepthLikeDispatch(t *testing.T) {
	const maxDepth = amqpsax.DefaultMaxDepth
	lists := func(n int, inner []byte) []byte {
		for range n {
			inner = encode.EndList32(append(encode.BeginList(nil), inner...), 0, 1)
		}
		return inner
	}
	descArray := encode.BeginDescribedArray(nil, encode.AppendUlong(nil, 0x70), amqpsax.CodeList32)
	descArray = append(descArray, 0, 0, 0, 4, 0, 0, 0, 0) // an empty list32 element body
	descArray = append(descArray, 0, 0, 0, 4, 0, 0, 0, 0)
	descArray = encode.EndArray32(descArray, 0, 2)
	for _, n := range []int{maxDepth - 3, maxDepth - 2, maxDepth - 1, maxDepth, maxDepth + 1} {
		checkLikeDispatch(t, fmt.Sprint("lists ", n), lists(n, encode.AppendNull(nil)))
		checkLikeDispatch(t, fmt.Sprint("lists and a described array ", n), lists(n, descArray))
		described := bytes.Repeat([]byte{0x00, 0x53, 0x01}, n)
		checkLikeDispatch(t, fmt.Sprint("described ", n), append(described, 0x40))
		checkLikeDispatch(t, fmt.Sprint("described descriptors ", n), append(bytes.Repeat([]byte{0x00}, n), bytes.Repeat([]byte{0x40}, n+1)...))
	}
}

// TestCorpusPrints: every value, message and performative of the Proton
// corpus prints without error, with one line per value at least.
func TestCorpusPrints(t *testing.T) {
	for _, e := range corpus.All(t) {
		r := dumpBytes(t, e.Data, false)
		if assert.NoError(t, r.err, e.Name) {
			assert.NotEmpty(t, r.out, e.Name)
		}
	}
}

// frameBytes returns an AMQP frame on channel with body perf+payload.
func frameBytes(channel uint16, perf, payload []byte) []byte {
	size := 8 + len(perf) + len(payload)
	b := []byte{byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size), 2, 0, byte(channel >> 8), byte(channel)}
	return append(append(b, perf...), payload...)
}

// transferPerf encodes a transfer performative with the fields handle,
// delivery-id, more and aborted.
func transferPerf(handle, id uint32, more, aborted bool) []byte {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorTransfer))
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendUint(b, handle)
	b = encode.AppendUint(b, id)
	b = encode.AppendBinary(b, []byte{byte(id)})
	b = encode.AppendUint(b, 0)
	b = encode.AppendNull(b) // settled
	b = encode.AppendBool(b, more)
	b = encode.AppendNull(b) // rcv-settle-mode
	b = encode.AppendNull(b) // state
	b = encode.AppendNull(b) // resume
	b = encode.AppendBool(b, aborted)
	return encode.EndList(b, start, 10)
}

// TestReassembly: deliveries split over transfers are gathered per
// channel and handle, even interleaved with other links; aborted
// deliveries are dropped; unfinished ones are reported at the end; and
// offsets inside a reassembled message are those of the input.
func TestReassembly(t *testing.T) {
	// A message of two sections: a header and a 40-byte data body.
	msg := encode.AppendDescribed(nil)
	msg = encode.AppendUlong(msg, 0x70)
	msg = encode.AppendCodeList0(msg)
	msg = encode.AppendDescribed(msg)
	msg = encode.AppendUlong(msg, 0x75)
	msg = encode.AppendBinary(msg, bytes.Repeat([]byte{0xab}, 40))
	small := encode.AppendDescribed(nil)
	small = encode.AppendUlong(small, 0x77)
	small = encode.AppendString(small, "x")

	var s []byte
	s = append(s, "AMQP\x00\x01\x00\x00"...)
	s = append(s, frameBytes(0, transferPerf(0, 1, true, false), msg[:5])...)   // frame 1
	s = append(s, frameBytes(1, transferPerf(0, 2, false, false), small)...)    // frame 2: same handle, other channel
	s = append(s, frameBytes(0, transferPerf(1, 3, true, false), small[:2])...) // frame 3: other handle
	s = append(s, frameBytes(0, transferPerf(0, 1, true, false), msg[5:9])...)  // frame 4
	s = append(s, frameBytes(0, transferPerf(1, 3, false, true), nil)...)       // frame 5: aborts handle 1
	secondAt := len(s) + 8 + len(transferPerf(0, 1, false, false))
	s = append(s, frameBytes(0, transferPerf(0, 1, false, false), msg[9:])...) // frame 6
	s = append(s, frameBytes(2, transferPerf(7, 9, true, false), small)...)    // frame 7: never finished

	var out bytes.Buffer
	o := dump.NewOut(&out)
	o.Offsets, o.Width = true, len(strconv.Itoa(len(s)))
	st := dump.NewStream(o, dump.Options{OnFault: func(err error) { t.Error(err) }})
	st.WriteAll(s)
	text := out.String()

	assert.Contains(t, text, "  payload: 5 bytes, more to come\n")
	assert.Contains(t, text, "  payload: 0 bytes; delivery aborted: 2 bytes from 2 transfers dropped\n")
	assert.Contains(t, text, fmt.Sprintf("  message: %d bytes from frames 1-6\n", len(msg)))
	assert.Contains(t, text, "incomplete delivery on channel 2, handle 7: 6 bytes in 1 transfers from frame 7, no last transfer\n")
	assert.Equal(t, 1, strings.Count(text, `string "x"`), "the message on channel 1 and no other")

	// The message's header is msg[:4] and its data section msg[4:], which
	// starts in frame 1's payload (its 0x00), goes on in frame 4's
	// (descriptor, then the binary from msg[7]) and ends in frame 6's.
	payload1 := 8 + 8 + len(transferPerf(0, 1, true, false))
	frame4 := strings.Index(text, "frame 4 at ")
	require.Positive(t, frame4)
	at4, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(text[frame4+len("frame 4 at "):])[0], ":"))
	require.NoError(t, err)
	payload4 := at4 + 8 + len(transferPerf(0, 1, true, false))
	assert.Regexp(t, fmt.Sprintf(`(?m)^ *%d    message: %d bytes from frames 1-6$`, payload1, len(msg)), text)
	assert.Regexp(t, fmt.Sprintf(`(?m)^ *%d      described amqp:header:list`, payload1), text)
	assert.Regexp(t, fmt.Sprintf(`(?m)^ *%d      described amqp:data:binary`, payload1+4), text)
	assert.Regexp(t, fmt.Sprintf(`(?m)^ *%d        binary\[40\] `, payload4+2), text)
	assert.Regexp(t, fmt.Sprintf(`(?m)^ *%d    payload: %d bytes, the last of 3 transfers$`, secondAt, len(msg)-9), text)
}

// TestReassemblyError: a fault in a reassembled message is reported at its
// offset in the input, in the frame that holds it.
func TestReassemblyError(t *testing.T) {
	bad := []byte{0x00, 0x53, 0x75, 0xa0, 0x09, 1, 2, 3, 4, 5, 6, 7, 8} // vbin8 claims 9 bytes, 8 follow
	var s []byte
	s = append(s, frameBytes(0, transferPerf(0, 1, true, false), bad[:6])...)
	s = append(s, frameBytes(0, transferPerf(0, 1, false, false), bad[6:])...)
	r := dumpBytes(t, s, true)
	require.Len(t, r.faults, 1)
	var ae *amqpsax.Error
	require.ErrorAs(t, r.faults[0], &ae)
	assert.ErrorIs(t, ae, io.ErrUnexpectedEOF)
	assert.Equal(t, 8+len(transferPerf(0, 1, true, false))+3, ae.Offset, "the vbin8, in the first frame")
	assert.True(t, strings.HasSuffix(r.out, "    described amqp:data:binary (ulong 0x75 <smallulong>)\n"), r.out)
}

// TestHexInput: white space and comments are ignored; bad digits are
// reported with their line and column.
func TestHexInput(t *testing.T) {
	b, err := decodeHex([]byte("# a comment 0xff\n 00 53\t70 # another\r\n45\n"))
	require.NoError(t, err)
	assert.Equal(t, []byte{0x00, 0x53, 0x70, 0x45}, b)
	b, err = decodeHex([]byte("AbCd"))
	require.NoError(t, err)
	assert.Equal(t, []byte{0xab, 0xcd}, b)
	_, err = decodeHex([]byte("00\n0x"))
	assert.EqualError(t, err, `hex input: invalid character 'x' at line 2, column 2`)
	_, err = decodeHex([]byte("00\n 5 # x"))
	assert.ErrorIs(t, err, errOddHex)
	assert.EqualError(t, err, "hex input: odd number of hex digits: the last digit, at line 2, column 2, has no pair")
}

// TestUsage: bad usage exits with status 2, -h with 0, and a missing file
// with 1.
func TestUsage(t *testing.T) {
	assert.Equal(t, 2, runTool(t, []string{"-nope"}, "").status)
	assert.Equal(t, 2, runTool(t, []string{"a", "b"}, "").status)
	assert.Equal(t, 0, runTool(t, []string{"-h"}, "").status)
	r := runTool(t, []string{filepath.Join(t.TempDir(), "absent")}, "")
	assert.Equal(t, 1, r.status)
	assert.Contains(t, r.stderr, "amqpdump: open ")
	r = runTool(t, nil, "")
	assert.Equal(t, result{"", "", 0}, r, "empty input prints nothing")
}

// TestExtendedHeader: the bytes between a frame's 8-byte header and its
// data offset are shown, in empty frames too, and skipped.
func TestExtendedHeader(t *testing.T) {
	perf := encode.AppendDescribed(nil)
	perf = encode.AppendUlong(perf, uint64(amqpsax.DescriptorEnd))
	perf = encode.AppendCodeList0(perf)
	s := []byte{0, 0, 0, 12, 3, 0, 0, 5, 0xde, 0xad, 0xbe, 0xef}
	s = append(s, 0, 0, 0, byte(16+len(perf)), 4, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8)
	s = append(s, perf...)
	r := dumpBytes(t, s, true)
	require.Empty(t, r.faults)
	assert.Equal(t, `frame 1 at 0: size 12, doff 3, type 0 (AMQP), channel 5: empty (heartbeat)
  extended header: deadbeef
frame 2 at 12: size 20, doff 4, type 0 (AMQP), channel 1: end
  extended header: 0102030405060708
  described amqp:end:list (ulong 0x17 <smallulong>)
    list[0] <list0>
`, r.out)
}

// TestPcapMatchesFrames: each direction of the connection in the capture
// (segments cut across frames, two out of order, one sent twice) prints
// what -frames prints for the stream it carries, line for line, behind
// the connection's and direction's prefix; the two directions are
// interleaved in capture order.
func TestPcapMatchesFrames(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	r := runTool(t, []string{"-pcap", "-o", "testdata/amqpdump/proton.pcap"}, "")
	require.Equal(t, 0, r.status, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.NotEmpty(t, lines)
	assert.Equal(t, "c1: client 10.0.0.1:40000, server 10.0.0.2:5672", strings.TrimSpace(lines[0]))
	var client, server []string
	interleaved := false
	for _, line := range lines[1:] {
		switch {
		case strings.HasPrefix(line, "c1 > "):
			client = append(client, line[len("c1 > "):])
		case strings.HasPrefix(line, "c1 < "):
			server = append(server, line[len("c1 < "):])
			interleaved = interleaved || len(client) > 0 && len(client) < 400
		default:
			t.Errorf("line without a prefix: %q", line)
		}
	}
	assert.True(t, interleaved, "the directions are interleaved")
	// The offset column is as wide as the capture's size needs (4
	// digits), as it is for each stream on its own.
	for side, got := range map[string][]string{"client": client, "server": server} {
		want := runTool(t, []string{"-frames", "-o", "testdata/proton/conn-" + side + ".bin"}, "")
		require.Equal(t, 0, want.status)
		assert.Equal(t, want.stdout, strings.Join(got, "\n")+"\n", side)
	}
}

// TestPcapJSON: with -json, every object of a capture names its
// connection and the side that sent it.
func TestPcapJSON(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	r := runTool(t, []string{"-pcap", "-json", "testdata/amqpdump/proton.pcap"}, "")
	require.Equal(t, 0, r.status, r.stderr)
	from := map[string]int{}
	for line := range strings.SplitSeq(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var obj struct {
			Conn int
			From string
		}
		require.NoError(t, json.Unmarshal([]byte(line), &obj), line)
		assert.Equal(t, 1, obj.Conn, line)
		from[obj.From]++
	}
	// The connection's own line, then the protocol headers and frames of
	// each side (testdata/proton/conn-*-frames.jsonl).
	assert.Equal(t, map[string]int{"": 1, "client": len(loadStream(t, "client")), "server": len(loadStream(t, "server"))}, from)
}

// TestRefuse: a connection stream or a capture read as values is refused
// with a hint, and bad flag combinations are usage errors.
func TestRefuse(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	r := runTool(t, []string{"testdata/amqpdump/proton.pcap"}, "")
	assert.Equal(t, result{"", "amqpdump: the input is a packet capture: read it with -pcap\n", 1}, r)
	r = runTool(t, []string{"-x"}, "testdata/amqpdump/bad-doff.hex")
	assert.Equal(t, 1, r.status)
	assert.Contains(t, r.stderr, "(AMQP amqp 1.0.0): it is a connection byte stream, read it with -frames")
	assert.Equal(t, 2, runTool(t, []string{"-frames", "-pcap"}, "").status)
	assert.Equal(t, 2, runTool(t, []string{"-pcap", "-port", "70000"}, "").status)
	r = runTool(t, []string{"-pcap", "testdata/amqpdump/all-sections.amqp"}, "")
	assert.Equal(t, result{"", "amqpdump: not a pcap or pcapng capture\n", 1}, r)
}

// TestLimitFlag: -limit stops the output with a message saying where.
func TestLimitFlag(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	r := runTool(t, []string{"-frames", "-limit", "500", "testdata/proton/conn-client.bin"}, "")
	assert.Equal(t, 1, r.status)
	assert.LessOrEqual(t, len(r.stdout), 500)
	assert.Equal(t, "amqpdump: output limit of 500 bytes reached at input offset 62: the rest is not printed (set the limit to 0 for no limit)\n", r.stderr)
	r = runTool(t, []string{"-frames", "-limit", "0", "testdata/proton/conn-client.bin"}, "")
	assert.Equal(t, 0, r.status)
}

// TestProtonCapabilityLists: Qpid Proton's python binding writes
// offered- and desired-capabilities given as Python lists as a list of
// symbols (doc/peers.md); the spec says a symbol or an array of symbols.
// Deployed peers take it, and so does amqpdump: both directions of such a
// connection print whole, and it exits 0 (it once exited 1).
func TestProtonCapabilityLists(t *testing.T) {
	for _, dir := range []string{"client", "server"} {
		r := runTool(t, []string{"-frames", filepath.Join(corpus.Dir(), "conn-caps-"+dir+".bin")}, "")
		assert.Equal(t, 0, r.status, "%s: %s", dir, r.stderr)
		assert.Empty(t, r.stderr, dir)
		assert.Contains(t, r.stdout, "offered-capabilities: list", dir)
		assert.Contains(t, r.stdout, "close", dir)
	}
}
