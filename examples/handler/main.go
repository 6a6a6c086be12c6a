// Command handler shows how to write an amqpsax.Handler: Stats gathers
// statistics of an AMQP message (how many values of each type, the bytes
// of its strings, symbols and binaries, its deepest nesting, and its
// sections) in one pass of the push decoder, package dispatch, without
// building the message.
//
// Run it on the bundled sample, a message Qpid Proton encoded with every
// section (testdata/proton/messages.jsonl, "all-sections"), or on a file of
// encoded message bytes:
//
//	go run ./examples/handler [file]
package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/google/uuid"
)

//go:embed sample.amqp
var sample []byte

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "handler:", err)
		os.Exit(1)
	}
}

// run prints the statistics of the message in the file args[0], or of the
// bundled sample when there is no argument.
func run(w io.Writer, args []string) error {
	name, data := "sample.amqp", sample
	switch len(args) {
	case 0:
	case 1:
		name = args[0]
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return err
		}
	default:
		return errors.New("usage: handler [file]")
	}
	var s Stats
	var d dispatch.Decoder
	if err := d.DecodeAll(data, &s); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d bytes, %d sections\n", name, len(data), len(s.Sections))
	for _, d := range s.Sections {
		fmt.Fprintf(w, "  %s\n", d)
	}
	fmt.Fprintf(w, "values by type:\n")
	for k, n := range s.Kinds {
		if n > 0 {
			fmt.Fprintf(w, "  %-10s %3d\n", amqpsax.Kind(k), n)
		}
	}
	fmt.Fprintf(w, "string bytes: %d\n", s.StringBytes)
	fmt.Fprintf(w, "symbol bytes: %d\n", s.SymbolBytes)
	fmt.Fprintf(w, "binary bytes: %d\n", s.BinaryBytes)
	fmt.Fprintf(w, "deepest nesting: %d\n", s.MaxDepth)
	return nil
}

// Stats is a Handler that gathers statistics of the values it is given.
// Use a new (zero) Stats per message.
//
// Embedding amqpsax.NopHandler is how a Handler starts: it supplies every
// method, and the type overrides the events it needs. Stats counts every
// value, so it overrides them all, most with one line that calls value,
// enter or leave.
type Stats struct {
	amqpsax.NopHandler

	// Kinds counts the values of each type, indexed by amqpsax.Kind. An
	// array's elements count as values of their type; a described value
	// counts as one described value plus its descriptor and its value.
	Kinds [amqpsax.KindDescribed + 1]int
	// StringBytes, SymbolBytes and BinaryBytes add up the lengths of the
	// strings (UTF-8 bytes), symbols and binaries.
	StringBytes, SymbolBytes, BinaryBytes int
	// MaxDepth is the deepest nesting of lists, maps, arrays and described
	// values: 1 for a value inside one of them at the top level.
	MaxDepth int
	// Sections lists the descriptors of the top-level described values —
	// the sections of a message — in order (AMQP 1.0 part 3 §3.2).
	// Descriptors given as symbols are looked up by name.
	Sections []amqpsax.Descriptor

	depth      int  // compounds and described values now open
	descriptor bool // the next value is the descriptor of a section
}

// value counts one value of kind k.
func (s *Stats) value(k amqpsax.Kind) error {
	s.Kinds[k]++
	s.descriptor = false
	return nil
}

// enter counts a list, map, array or described value, which opens a level.
func (s *Stats) enter(k amqpsax.Kind) error {
	s.value(k)
	s.depth++
	s.MaxDepth = max(s.MaxDepth, s.depth)
	return nil
}

// leave closes the innermost level.
func (s *Stats) leave() error {
	s.depth--
	return nil
}

// OnNull counts a null.
func (s *Stats) OnNull() error { return s.value(amqpsax.KindNull) }

// OnBool counts a boolean.
func (s *Stats) OnBool(bool) error { return s.value(amqpsax.KindBool) }

// OnUbyte counts a ubyte.
func (s *Stats) OnUbyte(uint8) error { return s.value(amqpsax.KindUbyte) }

// OnUshort counts a ushort.
func (s *Stats) OnUshort(uint16) error { return s.value(amqpsax.KindUshort) }

// OnUint counts a uint.
func (s *Stats) OnUint(uint32) error { return s.value(amqpsax.KindUint) }

// OnByte counts a byte.
func (s *Stats) OnByte(int8) error { return s.value(amqpsax.KindByte) }

// OnShort counts a short.
func (s *Stats) OnShort(int16) error { return s.value(amqpsax.KindShort) }

// OnInt counts an int.
func (s *Stats) OnInt(int32) error { return s.value(amqpsax.KindInt) }

// OnLong counts a long.
func (s *Stats) OnLong(int64) error { return s.value(amqpsax.KindLong) }

// OnFloat counts a float.
func (s *Stats) OnFloat(float32) error { return s.value(amqpsax.KindFloat) }

// OnDouble counts a double.
func (s *Stats) OnDouble(float64) error { return s.value(amqpsax.KindDouble) }

// OnDecimal32 counts a decimal32.
func (s *Stats) OnDecimal32(amqpsax.Decimal32) error { return s.value(amqpsax.KindDecimal32) }

// OnDecimal64 counts a decimal64.
func (s *Stats) OnDecimal64(amqpsax.Decimal64) error { return s.value(amqpsax.KindDecimal64) }

// OnDecimal128 counts a decimal128.
func (s *Stats) OnDecimal128(amqpsax.Decimal128) error { return s.value(amqpsax.KindDecimal128) }

// OnChar counts a char.
func (s *Stats) OnChar(rune) error { return s.value(amqpsax.KindChar) }

// OnTimestamp counts a timestamp.
func (s *Stats) OnTimestamp(int64) error { return s.value(amqpsax.KindTimestamp) }

// OnUUID counts a uuid.
func (s *Stats) OnUUID(uuid.UUID) error { return s.value(amqpsax.KindUUID) }

// OnListStart counts a list and opens its level.
func (s *Stats) OnListStart(int) error { return s.enter(amqpsax.KindList) }

// OnListEnd closes the level of a list.
func (s *Stats) OnListEnd() error { return s.leave() }

// OnMapStart counts a map and opens its level.
func (s *Stats) OnMapStart(int) error { return s.enter(amqpsax.KindMap) }

// OnMapEnd closes the level of a map.
func (s *Stats) OnMapEnd() error { return s.leave() }

// OnArrayStart counts an array and opens its level.
func (s *Stats) OnArrayStart(int, amqpsax.Kind) error { return s.enter(amqpsax.KindArray) }

// OnArrayEnd closes the level of an array.
func (s *Stats) OnArrayEnd() error { return s.leave() }

// OnDescribedEnd closes the level of a described value.
func (s *Stats) OnDescribedEnd() error { return s.leave() }

// OnUlong counts a ulong; when it is the descriptor of a section, it
// records the section.
func (s *Stats) OnUlong(v uint64) error {
	if s.descriptor {
		s.Sections = append(s.Sections, amqpsax.Descriptor(v))
	}
	return s.value(amqpsax.KindUlong)
}

// OnSymbol counts a symbol and its bytes; when it is the descriptor of a
// section, it records the section. The bytes are only looked at, not kept:
// they are valid only during the call.
func (s *Stats) OnSymbol(v []byte) error {
	if s.descriptor {
		if d, ok := amqpsax.LookupDescriptor(v); ok {
			s.Sections = append(s.Sections, d)
		}
	}
	s.SymbolBytes += len(v)
	return s.value(amqpsax.KindSymbol)
}

// OnString counts a string and its bytes.
func (s *Stats) OnString(v []byte) error {
	s.StringBytes += len(v)
	return s.value(amqpsax.KindString)
}

// OnBinary counts a binary and its bytes.
func (s *Stats) OnBinary(v []byte) error {
	s.BinaryBytes += len(v)
	return s.value(amqpsax.KindBinary)
}

// OnDescribedStart counts a described value. At the top level it is a
// section, whose descriptor comes next.
func (s *Stats) OnDescribedStart() error {
	top := s.depth == 0
	s.enter(amqpsax.KindDescribed)
	s.descriptor = top
	return nil
}

var _ amqpsax.Handler = (*Stats)(nil)
