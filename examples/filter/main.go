// Command filter shows a streaming filter: a Handler that wraps an
// *encode.Writer (see Filter), so that decoding a message into it with
// package dispatch re-encodes the message with changes, in one pass and
// without building the message. Here it adds the message annotation
// x-opt-routed-by = "amqpsax" and drops the application property
// "secret", then decodes the result with dispatch again and prints both
// messages as trees.
//
// Run it on the bundled sample, a message Qpid Proton encoded with a
// header, properties, application properties (one of them "secret") and a
// string body, but no message annotations (testdata/amqpdump/gen.py writes
// it), or on a file of encoded message bytes:
//
//	go run ./examples/filter [file]
package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/google/uuid"
)

//go:embed sample.amqp
var sample []byte

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "filter:", err)
		os.Exit(1)
	}
}

// run filters the message in the file args[0], or the bundled sample when
// there is no argument, and prints the message before and after.
func run(w io.Writer, args []string) error {
	name, msg := "sample.amqp", sample
	switch len(args) {
	case 0:
	case 1:
		name = args[0]
		var err error
		if msg, err = os.ReadFile(name); err != nil {
			return err
		}
	default:
		return errors.New("usage: filter [file]")
	}

	out, err := filter(msg)
	if err != nil {
		return err
	}

	var d dispatch.Decoder
	fmt.Fprintf(w, "%s, %d bytes:\n", name, len(msg))
	if err := d.DecodeAll(msg, &tree{w: w}); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfiltered, %d bytes (x-opt-routed-by annotated, \"secret\" dropped):\n", len(out))
	return d.DecodeAll(out, &tree{w: w})
}

// filter returns msg with the message annotation x-opt-routed-by =
// "amqpsax" added and the application property "secret" dropped.
func filter(msg []byte) ([]byte, error) {
	var w encode.Writer
	f := Filter{W: &w, AnnotationKey: "x-opt-routed-by", AnnotationValue: "amqpsax", DropProperty: "secret"}
	var d dispatch.Decoder
	if err := d.DecodeAll(msg, &f); err != nil {
		return nil, err
	}
	if err := f.Finish(); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

// tree is a Handler that prints the values it is given as an indented
// tree, one value per line, with the name of each descriptor the spec
// defines.
type tree struct {
	w          io.Writer
	depth      int
	descriptor bool // the next value is a descriptor
}

// line prints one value of kind k, with text after its type name.
func (t *tree) line(k amqpsax.Kind, text string) error {
	t.descriptor = false
	_, err := fmt.Fprintf(t.w, "%*s%s%s\n", 2*t.depth, "", k, text)
	return err
}

// open prints a compound or described value and opens its level.
func (t *tree) open(k amqpsax.Kind, text string) error {
	err := t.line(k, text)
	t.depth++
	return err
}

func (t *tree) close() error { t.depth--; return nil }

func (t *tree) OnNull() error           { return t.line(amqpsax.KindNull, "") }
func (t *tree) OnBool(v bool) error     { return t.line(amqpsax.KindBool, " "+strconv.FormatBool(v)) }
func (t *tree) OnUbyte(v uint8) error   { return t.line(amqpsax.KindUbyte, fmt.Sprint(" ", v)) }
func (t *tree) OnUshort(v uint16) error { return t.line(amqpsax.KindUshort, fmt.Sprint(" ", v)) }
func (t *tree) OnUint(v uint32) error   { return t.line(amqpsax.KindUint, fmt.Sprint(" ", v)) }
func (t *tree) OnByte(v int8) error     { return t.line(amqpsax.KindByte, fmt.Sprint(" ", v)) }
func (t *tree) OnShort(v int16) error   { return t.line(amqpsax.KindShort, fmt.Sprint(" ", v)) }
func (t *tree) OnInt(v int32) error     { return t.line(amqpsax.KindInt, fmt.Sprint(" ", v)) }
func (t *tree) OnLong(v int64) error    { return t.line(amqpsax.KindLong, fmt.Sprint(" ", v)) }
func (t *tree) OnFloat(v float32) error { return t.line(amqpsax.KindFloat, fmt.Sprint(" ", v)) }
func (t *tree) OnDouble(v float64) error {
	return t.line(amqpsax.KindDouble, fmt.Sprint(" ", v))
}
func (t *tree) OnDecimal32(v amqpsax.Decimal32) error {
	return t.line(amqpsax.KindDecimal32, fmt.Sprintf(" %x", v[:]))
}
func (t *tree) OnDecimal64(v amqpsax.Decimal64) error {
	return t.line(amqpsax.KindDecimal64, fmt.Sprintf(" %x", v[:]))
}
func (t *tree) OnDecimal128(v amqpsax.Decimal128) error {
	return t.line(amqpsax.KindDecimal128, fmt.Sprintf(" %x", v[:]))
}
func (t *tree) OnChar(v rune) error { return t.line(amqpsax.KindChar, " "+strconv.QuoteRune(v)) }
func (t *tree) OnTimestamp(ms int64) error {
	return t.line(amqpsax.KindTimestamp, " "+time.UnixMilli(ms).UTC().Format(time.RFC3339Nano))
}
func (t *tree) OnUUID(v uuid.UUID) error { return t.line(amqpsax.KindUUID, " "+v.String()) }
func (t *tree) OnBinary(v []byte) error  { return t.line(amqpsax.KindBinary, fmt.Sprintf(" %x", v)) }
func (t *tree) OnString(v []byte) error {
	return t.line(amqpsax.KindString, " "+strconv.Quote(string(v)))
}
func (t *tree) OnSymbol(v []byte) error {
	return t.line(amqpsax.KindSymbol, " "+strconv.Quote(string(v)))
}
func (t *tree) OnListStart(n int) error { return t.open(amqpsax.KindList, fmt.Sprintf("[%d]", n)) }
func (t *tree) OnListEnd() error        { return t.close() }
func (t *tree) OnMapStart(n int) error  { return t.open(amqpsax.KindMap, fmt.Sprintf("[%d]", n)) }
func (t *tree) OnMapEnd() error         { return t.close() }
func (t *tree) OnArrayStart(n int, elem amqpsax.Kind) error {
	return t.open(amqpsax.KindArray, fmt.Sprintf("[%d] of %s", n, elem))
}
func (t *tree) OnArrayEnd() error { return t.close() }
func (t *tree) OnDescribedStart() error {
	err := t.open(amqpsax.KindDescribed, "")
	t.descriptor = true
	return err
}
func (t *tree) OnDescribedEnd() error { return t.close() }

// OnUlong prints a ulong, with its name when it is a descriptor the spec
// defines.
func (t *tree) OnUlong(v uint64) error {
	text := fmt.Sprint(" ", v)
	if d := amqpsax.Descriptor(v); t.descriptor && d.Name() != "" {
		text = fmt.Sprintf(" 0x%02x %s", v, d.Name())
	}
	return t.line(amqpsax.KindUlong, text)
}

var _ amqpsax.Handler = (*tree)(nil)
