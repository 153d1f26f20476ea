// Command doccheck fails when a doc comment does not start with the name
// it documents, as revive's `exported` rule (and golint before it) asks,
// but for every declaration that has a doc comment, exported or not: a
// comment that names a function, type, variable or constant that has since
// been renamed or moved is the first thing a newcomer trips over, and a
// check is what keeps such comments from drifting (`make vet` runs it).
//
//	go run ./internal/doccheck [DIR]...
//
// It reads every .go file under each DIR (default "."), whatever its build
// tags, skipping testdata, hidden folders, bin/ and generated files ("Code
// generated ... DO NOT EDIT."), and prints one line per comment that breaks
// the rule:
//
//	engine/mm/lru.go:55: the doc comment of func lruListOf starts with "lruType"; it should start with "lruListOf "
//
// The rule, declaration by declaration, as golint had it:
//   - a func or method: the comment starts with its name followed by a
//     space or, when it documents a list of names, a comma (Test, Benchmark, Example and Fuzz functions of _test.go files
//     are exempt: their names are the sentence);
//   - a type: the same, or "A", "An" or "The" and then the name;
//   - a var or const with one name: the same as a func, from the spec's own
//     comment or, when the spec has none, the declaration's; a parenthesized
//     group's comment describes the group and is not checked, nor are
//     specs that declare several names.
//
// A comment may also be a "Deprecated: " note; a comment of directives
// alone (//go:embed) is not checked. Exit status: 0 when every
// comment passes, 1 when one does not, 2 when a file cannot be read or
// parsed.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	dirs := os.Args[1:]
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	os.Exit(run(dirs, os.Stdout, os.Stderr))
}

// run checks every dir, prints the problems to out and errors to errw, and
// returns the exit status.
func run(dirs []string, out, errw io.Writer) int {
	var all []Problem
	for _, dir := range dirs {
		ps, err := CheckDir(dir)
		if err != nil {
			fmt.Fprintln(errw, "doccheck:", err)
			return 2
		}
		all = append(all, ps...)
	}
	for _, p := range all {
		fmt.Fprintln(out, p)
	}
	if len(all) > 0 {
		fmt.Fprintf(errw, "doccheck: %d doc comments do not start with the name they document\n", len(all))
		return 1
	}
	return 0
}
