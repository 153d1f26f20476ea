package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Problem is one doc comment that does not start with the name it
// documents.
type Problem struct {
	Pos  token.Position // where the comment starts
	Kind string         // "func", "type", "var" or "const"
	Name string         // the declared name
	Got  string         // the comment's first word
}

// String prints the problem as file:line: message.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: the doc comment of %s %s starts with %q; it should start with %q",
		p.Pos.Filename, p.Pos.Line, p.Kind, p.Name, p.Got, p.Name+" ")
}

// CheckDir checks every Go file under dir (see the command's comment for
// which files are skipped), in lexical order of their paths.
func CheckDir(dir string) ([]Problem, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != dir && (name == "testdata" || name == "bin" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var all []Problem
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		ps, err := CheckFile(path, src)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	return all, nil
}

// CheckFile checks one file's source; path names it in the problems and
// tells a _test.go file.
func CheckFile(path string, src []byte) ([]Problem, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	isTest := strings.HasSuffix(path, "_test.go")
	var ps []Problem
	report := func(doc *ast.CommentGroup, kind, name string, articles bool) {
		// A comment of directives alone (//go:embed) has no text to check.
		if doc == nil || doc.Text() == "" || startsWithName(doc.Text(), name, articles) {
			return
		}
		ps = append(ps, Problem{Pos: fset.Position(doc.Pos()), Kind: kind, Name: name, Got: firstWord(doc.Text())})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if isTest && d.Recv == nil && isTestFunc(d.Name.Name) {
				continue
			}
			report(d.Doc, "func", d.Name.Name, false)
		case *ast.GenDecl:
			grouped := d.Lparen.IsValid()
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					doc := s.Doc
					if doc == nil && !grouped {
						doc = d.Doc
					}
					report(doc, "type", s.Name.Name, true)
				case *ast.ValueSpec:
					if len(s.Names) != 1 || s.Names[0].Name == "_" {
						continue
					}
					doc := s.Doc
					if doc == nil && !grouped {
						doc = d.Doc
					}
					report(doc, d.Tok.String(), s.Names[0].Name, false)
				}
			}
		}
	}
	return ps, nil
}

// startsWithName reports whether text starts with name and a space (or is
// the name alone), after "A ", "An " or "The " when articles is set, or is
// a deprecation note.
func startsWithName(text, name string, articles bool) bool {
	if strings.HasPrefix(text, "Deprecated: ") {
		return true
	}
	if articles {
		for _, a := range []string{"A ", "An ", "The "} {
			if rest, ok := strings.CutPrefix(text, a); ok && hasName(rest, name) {
				return true
			}
		}
	}
	return hasName(text, name)
}

// hasName reports whether text starts with name followed by a space, a
// line's end or a comma (a comment that documents a list of names, "ReadTimeout,
// WriteTimeout and IdleTimeout end ...").
func hasName(text, name string) bool {
	rest, ok := strings.CutPrefix(text, name)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\n' || rest[0] == ',')
}

// isTestFunc reports whether name is one that go test runs by its prefix.
func isTestFunc(name string) bool {
	return slices.ContainsFunc([]string{"Test", "Benchmark", "Example", "Fuzz"}, func(p string) bool {
		return strings.HasPrefix(name, p)
	})
}

// firstWord is text's first word, for the message.
func firstWord(text string) string {
	if f := strings.Fields(text); len(f) > 0 {
		return f[0]
	}
	return ""
}
