package frame

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Qpid Proton corpus (testdata/proton, see its README.md): the two
// byte streams of one connection between Proton's engines, the list of
// their frames, and the performatives cut out of them with the trace
// Proton's decoder gave each.

var protonDir = filepath.Join("..", "testdata", "proton")

// perfEntry is one line of performatives.jsonl.
type perfEntry struct {
	Name       string `json:"name"`
	Channel    uint16 `json:"channel"`
	Type       uint8  `json:"type"`
	Hex        string `json:"hex"`
	PayloadHex string `json:"payload_hex"`
	Trace      string `json:"trace"`
	Conn       string `json:"conn"`
	Dir        string `json:"dir"`
	Offset     int64  `json:"offset"`

	perf, payload []byte
}

// frameEntry is one line of conn-*-frames.jsonl.
type frameEntry struct {
	Kind         string  `json:"kind"`
	Offset       int64   `json:"offset"`
	Size         uint32  `json:"size"`
	Doff         uint8   `json:"doff"`
	Type         uint8   `json:"type"`
	Channel      uint16  `json:"channel"`
	Performative *string `json:"performative"`
	Hex          string  `json:"hex"`
}

func loadJSONL[T any](t testing.TB, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join(protonDir, name))
	require.NoError(t, err)
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), name)
		out = append(out, e)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out, name)
	return out
}

func loadPerformatives(t testing.TB) []perfEntry {
	es := loadJSONL[perfEntry](t, "performatives.jsonl")
	for i := range es {
		var err error
		es[i].perf, err = hex.DecodeString(es[i].Hex)
		require.NoError(t, err)
		es[i].payload, err = hex.DecodeString(es[i].PayloadHex)
		require.NoError(t, err)
	}
	return es
}

func readStream(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(protonDir, name))
	require.NoError(t, err)
	return b
}

// perfName is the spec's name of a performative descriptor: "open",
// "sasl-init", …
func perfName(d amqpsax.Descriptor) string {
	n := d.Name()
	n = strings.TrimPrefix(n, "amqp:")
	return strings.TrimSuffix(n, ":list")
}

// TestReaderProton reads both streams of the connection and checks every
// protocol header and frame against the committed frame lists: offset,
// size, data offset, type, channel, performative; then writes every item
// back with AppendFrame and gets the stream again.
func TestReaderProton(t *testing.T) {
	for _, dir := range []string{"client", "server"} {
		t.Run(dir, func(t *testing.T) {
			data := readStream(t, "conn-"+dir+".bin")
			want := loadJSONL[frameEntry](t, "conn-"+dir+"-frames.jsonl")
			r := NewReader(bytes.NewReader(data))
			var back []byte
			for i, w := range want {
				f, err := r.Next()
				require.NoError(t, err, "item %d", i)
				assert.Equal(t, w.Offset, f.Offset, "item %d", i)
				assert.Equal(t, w.Size, f.Size, "item %d", i)
				back = AppendFrame(back, f)
				if w.Kind == "protocol-header" {
					require.True(t, f.IsHeader, "item %d", i)
					h, _ := hex.DecodeString(w.Hex)
					assert.Equal(t, h, AppendProtocolHeader(nil, f.Header))
					continue
				}
				require.False(t, f.IsHeader, "item %d", i)
				assert.Equal(t, w.Doff, f.DataOffset(), "item %d", i)
				assert.Equal(t, w.Type, f.Type, "item %d", i)
				assert.Equal(t, w.Channel, f.Channel, "item %d", i)
				d, err := Performative(f.Body)
				require.NoError(t, err, "item %d", i)
				if w.Performative == nil {
					assert.True(t, f.IsHeartbeat(), "item %d", i)
					assert.Zero(t, d)
				} else {
					assert.False(t, f.IsHeartbeat(), "item %d", i)
					assert.Equal(t, *w.Performative, perfName(d), "item %d", i)
				}
			}
			_, err := r.Next()
			assert.Equal(t, io.EOF, err)
			assert.Equal(t, int64(len(data)), r.Offset())
			assert.Equal(t, data, back)
		})
	}
}

// parseAny decodes body with the Parse function of its performative and
// returns the typed value (a pointer to it), the bytes after it, and the
// encoding the matching Append function writes for it.
func parseAny(body []byte) (v any, rest, enc []byte, err error) {
	d, err := Performative(body)
	if err != nil {
		return nil, nil, nil, err
	}
	switch d {
	case amqpsax.DescriptorOpen:
		x, err := ParseOpen(body)
		return &x, nil, AppendOpen(nil, x), err
	case amqpsax.DescriptorBegin:
		x, err := ParseBegin(body)
		return &x, nil, AppendBegin(nil, x), err
	case amqpsax.DescriptorAttach:
		x, err := ParseAttach(body)
		return &x, nil, AppendAttach(nil, x), err
	case amqpsax.DescriptorFlow:
		x, err := ParseFlow(body)
		return &x, nil, AppendFlow(nil, x), err
	case amqpsax.DescriptorTransfer:
		x, r, err := ParseTransfer(body)
		return &x, r, AppendTransfer(nil, x), err
	case amqpsax.DescriptorDisposition:
		x, err := ParseDisposition(body)
		return &x, nil, AppendDisposition(nil, x), err
	case amqpsax.DescriptorDetach:
		x, err := ParseDetach(body)
		return &x, nil, AppendDetach(nil, x), err
	case amqpsax.DescriptorEnd:
		x, err := ParseEnd(body)
		return &x, nil, AppendEnd(nil, x), err
	case amqpsax.DescriptorClose:
		x, err := ParseClose(body)
		return &x, nil, AppendClose(nil, x), err
	case amqpsax.DescriptorSASLMechanisms:
		x, err := ParseSASLMechanisms(body)
		return &x, nil, AppendSASLMechanisms(nil, x), err
	case amqpsax.DescriptorSASLInit:
		x, err := ParseSASLInit(body)
		return &x, nil, AppendSASLInit(nil, x), err
	case amqpsax.DescriptorSASLChallenge:
		x, err := ParseSASLChallenge(body)
		return &x, nil, AppendSASLChallenge(nil, x), err
	case amqpsax.DescriptorSASLResponse:
		x, err := ParseSASLResponse(body)
		return &x, nil, AppendSASLResponse(nil, x), err
	case amqpsax.DescriptorSASLOutcome:
		x, err := ParseSASLOutcome(body)
		return &x, nil, AppendSASLOutcome(nil, x), err
	}
	return nil, nil, nil, errors.New("no performative " + d.String())
}

// TestPerformativesProton parses every performative of the corpus,
// checks that its typed fields say what dispatch reads in its bytes (and
// what Proton's decoder read: the corpus trace), and that its Append
// function writes it back byte for byte.
func TestPerformativesProton(t *testing.T) {
	names := map[string]int{}
	for _, e := range loadPerformatives(t) {
		names[e.Name]++
		t.Run(e.Name+"@"+e.Conn+"/"+e.Dir+"/"+strconv.FormatInt(e.Offset, 10), func(t *testing.T) {
			body := append(append([]byte(nil), e.perf...), e.payload...)
			v, rest, enc, err := parseAny(body)
			require.NoError(t, err)
			assert.Equal(t, string(e.payload), string(rest), "payload")
			assert.Equal(t, hex.EncodeToString(e.perf), hex.EncodeToString(enc), "re-encoded")

			var rec trace.Recorder
			_, err = dispatch.Decode(e.perf, &rec)
			require.NoError(t, err)
			require.Equal(t, e.Trace, rec.String(), "dispatch and Proton disagree")
			assert.Equal(t, e.Trace, typedTrace(t, reflect.ValueOf(v).Elem()), "typed fields")
		})
	}
	// Every performative of part 2 but none of the others, and the
	// three SASL frames Proton's engine sends without Cyrus.
	for _, n := range []string{"open", "begin", "attach", "flow", "transfer", "disposition", "detach", "end", "close",
		"sasl-mechanisms", "sasl-init", "sasl-outcome"} {
		assert.NotZero(t, names[n], n)
	}
}

// TestFramesProton rebuilds every frame of both streams from its typed
// performative with BeginFrame, the Append function and EndFrame, and
// gets the bytes Proton's engine wrote.
func TestFramesProton(t *testing.T) {
	for _, dir := range []string{"client", "server"} {
		data := readStream(t, "conn-"+dir+".bin")
		r := NewReader(bytes.NewReader(data))
		var out []byte
		for {
			f, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			if f.IsHeader {
				out = AppendProtocolHeader(out, f.Header)
				continue
			}
			start := len(out)
			out = BeginFrame(out, f.Type, f.Channel)
			if len(f.Body) > 0 {
				_, rest, enc, err := parseAny(f.Body)
				require.NoError(t, err, "frame at %d", f.Offset)
				out = append(append(out, enc...), rest...)
			}
			out = EndFrame(out, start)
			assert.Equal(t, data[f.Offset:f.Offset+int64(f.Size)], out[start:], "frame at %d", f.Offset)
		}
		assert.Equal(t, data, out, dir)
	}
}

// typedTrace writes the trace (the corpus's format) of the composite v,
// a struct of this package, from its typed fields alone: each field of
// the spec in order, "null" when its Has bit is clear, as many as
// Elements says. Maps and Symbols, kept raw, are traced by dispatch.
func typedTrace(t *testing.T, v reflect.Value) string {
	var toks []string
	writeComposite(t, &toks, v)
	return strings.Join(toks, " ")
}

func writeComposite(t *testing.T, toks *[]string, v reflect.Value) {
	spec, d := specOf(t, v)
	fields := v.FieldByName("Fields").Interface().(Fields)
	*toks = append(*toks, "described", "ulong:"+strconv.FormatUint(uint64(d), 10), "list:"+strconv.Itoa(fields.Elements()))
	for i := 0; i < fields.Elements(); i++ {
		if !fields.Has(FieldIndex(i)) {
			*toks = append(*toks, "null")
			continue
		}
		fs := spec.Fields[i]
		f := v.FieldByName(goName(fs.Name))
		require.True(t, f.IsValid(), "%s has no field for %s", v.Type(), fs.Name)
		writeValue(t, toks, fs, f)
	}
	*toks = append(*toks, "/list", "/described")
}

// specOf returns the spec and descriptor of the composite v holds.
func specOf(t *testing.T, v reflect.Value) (*composite.Spec, amqpsax.Descriptor) {
	switch x := v.Addr().Interface().(type) {
	case *Target:
		if x.Coordinator {
			return specCoordinator, amqpsax.DescriptorCoordinator
		}
		return specTarget, amqpsax.DescriptorTarget
	case *DeliveryState:
		return specs[x.Descriptor], x.Descriptor
	}
	d, ok := goTypes[v.Type().Name()]
	require.True(t, ok, v.Type().Name())
	return specs[d], d
}

// goTypes maps each Go type to the descriptor of its composite type.
var goTypes = map[string]amqpsax.Descriptor{
	"Open": amqpsax.DescriptorOpen, "Begin": amqpsax.DescriptorBegin, "Attach": amqpsax.DescriptorAttach,
	"Flow": amqpsax.DescriptorFlow, "Transfer": amqpsax.DescriptorTransfer,
	"Disposition": amqpsax.DescriptorDisposition, "Detach": amqpsax.DescriptorDetach,
	"End": amqpsax.DescriptorEnd, "Close": amqpsax.DescriptorClose, "AMQPError": amqpsax.DescriptorError,
	"SASLMechanisms": amqpsax.DescriptorSASLMechanisms, "SASLInit": amqpsax.DescriptorSASLInit,
	"SASLChallenge": amqpsax.DescriptorSASLChallenge, "SASLResponse": amqpsax.DescriptorSASLResponse,
	"SASLOutcome": amqpsax.DescriptorSASLOutcome, "Source": amqpsax.DescriptorSource,
	"Target": amqpsax.DescriptorTarget, "Declare": amqpsax.DescriptorDeclare,
	"Discharge": amqpsax.DescriptorDischarge, "Declared": amqpsax.DescriptorDeclared,
	"TransactionalState": amqpsax.DescriptorTransactionalState,
}

func writeValue(t *testing.T, toks *[]string, fs composite.Field, f reflect.Value) {
	raw := func(b []byte) {
		var rec trace.Recorder
		_, err := dispatch.Decode(b, &rec)
		require.NoError(t, err)
		*toks = append(*toks, rec.String())
	}
	if strings.HasPrefix(f.Type().Name(), "Opt[") { // the value of a present Opt, addressable
		v := reflect.New(f.Type().Method(0).Type.Out(0)).Elem()
		v.Set(f.MethodByName("Get").Call(nil)[0])
		f = v
	}
	switch x := f.Interface().(type) {
	case Symbols:
		raw(x)
	case Map:
		raw(x)
	case DeliveryState:
		if x.Type == StateOther {
			raw(x.Raw)
			return
		}
		writeComposite(t, toks, f)
	case Source, Target, AMQPError:
		writeComposite(t, toks, f)
	case ExpiryPolicy:
		*toks = append(*toks, "symbol:"+hex.EncodeToString([]byte(x.String())))
	case []byte:
		*toks = append(*toks, fs.Kind.String()+":"+hex.EncodeToString(x))
	default:
		switch f.Kind() {
		case reflect.Bool:
			*toks = append(*toks, "bool:"+strconv.FormatBool(f.Bool()))
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			*toks = append(*toks, fs.Kind.String()+":"+strconv.FormatUint(f.Uint(), 10))
		default:
			t.Fatalf("field %s: no trace for %s", fs.Name, f.Type())
		}
	}
}

// goName is the Go name of a field the spec names name:
// "delivery-id" → "DeliveryID".
func goName(name string) string {
	if name == "sasl-server-mechanisms" {
		return "Mechanisms"
	}
	var b strings.Builder
	for _, w := range strings.Split(name, "-") {
		switch w {
		case "id", "sasl", "amqp":
			b.WriteString(strings.ToUpper(w))
		default:
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}
