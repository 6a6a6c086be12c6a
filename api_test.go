package amqpsax_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateAPI = flag.Bool("update-api", false, "rewrite api/amqpsax.txt from the code")

// apiPackages are the library's public packages, whose exported API
// api/amqpsax.txt records.
var apiPackages = []string{".", "amqptest", "broker", "client", "dispatch", "driver", "encode", "engine", "frame", "message", "stream"}

// TestAPI holds the exported API to api/amqpsax.txt, one declaration a
// line, as the Go project's api/ files do: every change to it shows in
// review as a change to that file. After a deliberate change, run
//
//	go test -run TestAPI -update-api .
//
// and say why in the commit (and in CHANGELOG.md for a rename or removal).
func TestAPI(t *testing.T) {
	var lines []string
	for _, dir := range apiPackages {
		if _, err := os.Stat(dir); err != nil {
			continue // a package not written yet
		}
		lines = append(lines, apiOf(t, dir)...)
	}
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("api", "amqpsax.txt")
	if *updateAPI {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "the exported API changed: if on purpose, run go test -run TestAPI -update-api . and commit api/amqpsax.txt")
}

// apiOf lists the exported declarations of the package in dir.
func apiOf(t *testing.T, dir string) []string {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	pkgs := map[string][]*ast.File{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments|parser.SkipObjectResolution)
		require.NoError(t, err)
		pkgs[f.Name.Name] = append(pkgs[f.Name.Name], f)
	}
	var out []string
	for name, files := range pkgs {
		if name == "main" {
			continue
		}
		prefix := "pkg " + name + ", "
		str := func(n any) string {
			var b bytes.Buffer
			require.NoError(t, printer.Fprint(&b, fset, n))
			return strings.Join(strings.Fields(b.String()), " ")
		}
		for _, f := range files {
			if ast.IsGenerated(f) {
				continue
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					sig := str(d.Type)
					sig = "func " + d.Name.Name + strings.TrimPrefix(sig, "func")
					if d.Recv != nil {
						recv := str(d.Recv.List[0].Type)
						if !ast.IsExported(strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")) {
							continue
						}
						sig = "method (" + recv + ") " + strings.TrimPrefix(sig, "func ")
					}
					out = append(out, prefix+sig)
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							out = append(out, typeAPI(prefix, s, str)...)
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if !n.IsExported() {
									continue
								}
								line := prefix + d.Tok.String() + " " + n.Name
								if s.Type != nil {
									line += " " + str(s.Type)
								}
								out = append(out, line)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// typeAPI lists a type, and the exported fields of a struct or methods of
// an interface, each on a line of its own.
func typeAPI(prefix string, s *ast.TypeSpec, str func(any) string) []string {
	name := s.Name.Name
	if s.TypeParams != nil {
		var ps []string
		for _, f := range s.TypeParams.List {
			var ns []string
			for _, n := range f.Names {
				ns = append(ns, n.Name)
			}
			ps = append(ps, strings.Join(ns, ", ")+" "+str(f.Type))
		}
		name += "[" + strings.Join(ps, ", ") + "]"
	}
	switch x := s.Type.(type) {
	case *ast.StructType:
		out := []string{prefix + "type " + name + " struct"}
		for _, f := range x.Fields.List {
			if len(f.Names) == 0 { // embedded
				if typ := str(f.Type); ast.IsExported(strings.TrimLeft(typ, "*")) {
					out = append(out, prefix+"type "+name+" struct, embedded "+typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					out = append(out, prefix+"type "+name+" struct, "+n.Name+" "+str(f.Type))
				}
			}
		}
		return out
	case *ast.InterfaceType:
		out := []string{prefix + "type " + name + " interface"}
		for _, m := range x.Methods.List {
			for _, n := range m.Names {
				out = append(out, prefix+"type "+name+" interface, "+n.Name+strings.TrimPrefix(str(m.Type), "func"))
			}
			if len(m.Names) == 0 {
				out = append(out, prefix+"type "+name+" interface, embedded "+str(m.Type))
			}
		}
		return out
	}
	return []string{prefix + "type " + name + " " + str(s.Type)}
}
