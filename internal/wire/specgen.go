//go:build ignore

// Specgen extracts the wire-level facts of the AMQP 1.0 specification from
// its XML and writes them as a Go test table, so that the tests of package
// wire can check the codec against the spec without the XML being committed.
//
// Usage:
//
//	go run internal/wire/specgen.go -specs DIR > internal/wire/spec_table_test.go
//
// DIR is the directory holding the AMQP 1.0 XML files types.bare.xml,
// transport.bare.xml, messaging.bare.xml, transactions.bare.xml and
// security.bare.xml. On Debian and Ubuntu they come with the package
// amqp-specs ("apt-get install amqp-specs"); list its files with
// "dpkg -L amqp-specs" and use the directory of its 1-0/types.bare.xml,
// for example:
//
//	go run internal/wire/specgen.go \
//		-specs "$(dirname "$(dpkg -L amqp-specs | grep '/1-0/types\.bare\.xml$')")" \
//		> internal/wire/spec_table_test.go
//
// The -specs flag is required; there is no default.
//
// The output, in package wire, declares:
//
//   - specEncodings: every <encoding> of types.bare.xml, in document order,
//     with the name of the <type> it belongs to.
//   - specDescriptors: every <descriptor> of the five files, in document order
//     within a file and the files in the order of the spec's parts (types,
//     transport, messaging, transactions, security), with the name of the
//     <type> it belongs to and the name of its file's <amqp> element.
//
// Only the standard library is used. Nothing is written unless the whole
// extraction succeeds, and the output is gofmt-formatted.
package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// specFiles lists the AMQP 1.0 XML files in the order of the spec's parts;
// each file's root <amqp> element must carry the given name.
var specFiles = []struct{ file, name string }{
	{"types.bare.xml", "types"},
	{"transport.bare.xml", "transport"},
	{"messaging.bare.xml", "messaging"},
	{"transactions.bare.xml", "transactions"},
	{"security.bare.xml", "security"},
}

type encoding struct {
	Type     string
	Name     string
	Code     byte
	Category string
	Width    int
}

type descriptor struct {
	Type   string
	Name   string
	Code   uint64
	Source string
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("specgen: ")
	specs := flag.String("specs", "", "directory holding the AMQP 1.0 XML (required; see \"dpkg -L amqp-specs\")")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run internal/wire/specgen.go -specs DIR > internal/wire/spec_table_test.go\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *specs == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}

	var encs []encoding
	var descs []descriptor
	for _, sf := range specFiles {
		path := filepath.Join(*specs, sf.file)
		e, d, err := parseFile(path, sf.name)
		if err != nil {
			log.Fatal(err)
		}
		if sf.name != "types" && len(e) != 0 {
			log.Fatalf("%s: unexpected <encoding> outside types.bare.xml", path)
		}
		encs = append(encs, e...)
		descs = append(descs, d...)
	}
	if len(encs) == 0 {
		log.Fatal("no <encoding> found in types.bare.xml")
	}
	if len(descs) == 0 {
		log.Fatal("no <descriptor> found")
	}

	src, err := format.Source(generate(encs, descs))
	if err != nil {
		log.Fatalf("formatting output: %v", err)
	}
	if _, err := os.Stdout.Write(src); err != nil {
		log.Fatal(err)
	}
}

// parseFile reads one spec file and returns its encodings and descriptors in
// document order. wantName is the expected name of its root <amqp> element.
func parseFile(path, wantName string) ([]encoding, []descriptor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()

	var (
		encs   []encoding
		descs  []descriptor
		source string   // name of the root <amqp> element
		types  []string // names of the enclosing <type> elements
	)
	dec := xml.NewDecoder(f)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			line, _ := dec.InputPos()
			where := fmt.Sprintf("%s:%d", path, line)
			switch t.Name.Local {
			case "amqp":
				if source != "" {
					return nil, nil, fmt.Errorf("%s: nested <amqp>", where)
				}
				source, err = requireAttr(t, "name")
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", where, err)
				}
				if source != wantName {
					return nil, nil, fmt.Errorf("%s: <amqp name=%q>, want %q", where, source, wantName)
				}
			case "type":
				name, err := requireAttr(t, "name")
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", where, err)
				}
				types = append(types, name)
			case "encoding":
				e, err := parseEncoding(t, types)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", where, err)
				}
				encs = append(encs, e)
			case "descriptor":
				d, err := parseDescriptor(t, types, source)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", where, err)
				}
				descs = append(descs, d)
			}
		case xml.EndElement:
			if t.Name.Local == "type" {
				types = types[:len(types)-1]
			}
		}
	}
	if source == "" {
		return nil, nil, fmt.Errorf("%s: no <amqp> element", path)
	}
	return encs, descs, nil
}

func parseEncoding(t xml.StartElement, types []string) (encoding, error) {
	if len(types) == 0 {
		return encoding{}, errors.New("<encoding> outside a <type>")
	}
	e := encoding{Type: types[len(types)-1], Name: attr(t, "name")}
	s, err := requireAttr(t, "code")
	if err != nil {
		return e, err
	}
	code, err := strconv.ParseUint(s, 0, 8)
	if err != nil {
		return e, fmt.Errorf("<encoding code=%q>: %w", s, err)
	}
	e.Code = byte(code)
	if e.Category, err = requireAttr(t, "category"); err != nil {
		return e, err
	}
	switch e.Category {
	case "fixed", "variable", "compound", "array":
	default:
		return e, fmt.Errorf("<encoding category=%q>: unknown category", e.Category)
	}
	if s, err = requireAttr(t, "width"); err != nil {
		return e, err
	}
	if e.Width, err = strconv.Atoi(s); err != nil || e.Width < 0 {
		return e, fmt.Errorf("<encoding width=%q>: not a width", s)
	}
	return e, nil
}

func parseDescriptor(t xml.StartElement, types []string, source string) (descriptor, error) {
	if len(types) == 0 {
		return descriptor{}, errors.New("<descriptor> outside a <type>")
	}
	d := descriptor{Type: types[len(types)-1], Source: source}
	var err error
	if d.Name, err = requireAttr(t, "name"); err != nil {
		return d, err
	}
	s, err := requireAttr(t, "code")
	if err != nil {
		return d, err
	}
	domain, id, ok := strings.Cut(s, ":")
	if !ok {
		return d, fmt.Errorf("<descriptor code=%q>: want domain:id", s)
	}
	hi, err1 := strconv.ParseUint(domain, 0, 32)
	lo, err2 := strconv.ParseUint(id, 0, 32)
	if err := errors.Join(err1, err2); err != nil {
		return d, fmt.Errorf("<descriptor code=%q>: %w", s, err)
	}
	d.Code = hi<<32 | lo
	return d, nil
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func requireAttr(t xml.StartElement, name string) (string, error) {
	v := attr(t, name)
	if v == "" {
		return "", fmt.Errorf("<%s> without %s attribute", t.Name.Local, name)
	}
	return v, nil
}

func generate(encs []encoding, descs []descriptor) []byte {
	var b bytes.Buffer
	b.WriteString(`// Code generated by specgen.go; DO NOT EDIT.

// This file was generated from the AMQP 1.0 specification's XML by
//
//	go run internal/wire/specgen.go -specs DIR > internal/wire/spec_table_test.go
//
// where DIR is the directory of the 1-0 XML files installed by the Debian
// package amqp-specs (see "dpkg -L amqp-specs" and the doc comment of
// specgen.go).

package wire

// specEncoding is one <encoding> of the spec's types.bare.xml.
type specEncoding struct {
	Type     string // the <type name=...>, e.g. "uint", "string", "list"
	Name     string // the <encoding name=...>, "" when the spec gives none (e.g. "smalluint", "str8-utf8", "ieee-754", "true")
	Code     byte   // the format code, e.g. 0x52
	Category string // "fixed", "variable", "compound" or "array"
	Width    int    // the width attribute
}

// specDescriptor is one <descriptor> of the spec.
type specDescriptor struct {
	Type   string // the <type name=...> it belongs to, e.g. "header", "open", "sasl-init"
	Name   string // symbolic descriptor, e.g. "amqp:header:list"
	Code   uint64 // numeric descriptor: domain<<32 | id, from e.g. "0x00000000:0x00000070"
	Source string // the spec file's <amqp name=...>: "types", "transport", "messaging", "transactions" or "security"
}

`)
	fmt.Fprintf(&b, "// specEncodings holds every <encoding> of types.bare.xml, in document order (%d in all).\n", len(encs))
	b.WriteString("var specEncodings = []specEncoding{\n")
	for _, e := range encs {
		fmt.Fprintf(&b, "{Type: %q, Name: %q, Code: 0x%02x, Category: %q, Width: %d},\n",
			e.Type, e.Name, e.Code, e.Category, e.Width)
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(&b, "// specDescriptors holds every <descriptor> of the spec (%d in all), in document\n", len(descs))
	b.WriteString("// order within each file, the files in the order of the spec's parts.\n")
	b.WriteString("var specDescriptors = []specDescriptor{\n")
	for _, d := range descs {
		fmt.Fprintf(&b, "{Type: %q, Name: %q, Code: 0x%08x_%08x, Source: %q},\n",
			d.Type, d.Name, d.Code>>32, d.Code&0xffffffff, d.Source)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
