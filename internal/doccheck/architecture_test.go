package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modulePath prefixes the project's own import paths.
const modulePath = "github.com/pagesim/pagesim/"

// repoRoot is the module's root, seen from this package's folder.
const repoRoot = "../.."

// architectureImports reads the package table of docs/ARCHITECTURE.md: for
// each package row whose imports cell is a list or "nothing", the project
// packages it names. Rows whose cell says something else ("(tests only)",
// "—") are not lists and are left out.
func architectureImports(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ARCHITECTURE.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "\n## Packages\n")
	require.True(t, ok, "ARCHITECTURE.md has a Packages section")
	table, _, _ = strings.Cut(table, "\n## ")
	rows := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		pkg := strings.TrimSuffix(strings.Trim(cells[0], "`"), "/")
		last := strings.TrimSpace(cells[len(cells)-1])
		switch {
		case last == "nothing":
			rows[pkg] = []string{}
		case strings.HasPrefix(last, "`"):
			var imps []string
			for _, s := range strings.Split(last, ", ") {
				imps = append(imps, strings.Trim(s, "`"))
			}
			rows[pkg] = imps
		}
	}
	return rows
}

// packageImports returns, for every folder of the module with non-test Go
// files, the project packages those files import under any build tags,
// sorted.
func packageImports(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != repoRoot && (d.Name() == "testdata" || d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(repoRoot, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		imps := pkgs[rel]
		if imps == nil {
			imps = []string{}
		}
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if own, ok := strings.CutPrefix(p, modulePath); ok && !slices.Contains(imps, own) {
				imps = append(imps, own)
			}
		}
		pkgs[rel] = imps
		return nil
	})
	require.NoError(t, err)
	for _, imps := range pkgs {
		slices.Sort(imps)
	}
	return pkgs
}

func TestArchitectureListsEveryPackageWithItsImportsAsTheyAre(t *testing.T) {
	doc := architectureImports(t)
	got := packageImports(t)
	require.NotEmpty(t, doc, "the table's rows were read")
	for pkg, imps := range got {
		want, ok := doc[pkg]
		if !assert.True(t, ok, "docs/ARCHITECTURE.md's package table has no row for %s, or its imports cell is not a list", pkg) {
			continue
		}
		slices.Sort(want)
		assert.Equal(t, imps, want, "the imports of %s in docs/ARCHITECTURE.md", pkg)
	}
	for pkg := range doc {
		_, ok := got[pkg]
		assert.True(t, ok, "docs/ARCHITECTURE.md lists %s, which has no Go files", pkg)
	}
}
