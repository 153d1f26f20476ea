package script

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const docPath = "../../docs/SCRIPT.md"

// rewriting reports whether the tests run with datadriven's -rewrite flag.
func rewriting() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}

var exampleRe = regexp.MustCompile("(?s)```pagesim\n(.*?)```\n\n?```output\n(.*?)```")

// TestDocExamplesRunAndPrintWhatTheDocShows runs every ```pagesim block
// of docs/SCRIPT.md and compares its output with the ```output block after
// it; -rewrite refreshes the outputs and the command reference.
func TestDocExamplesRunAndPrintWhatTheDocShows(t *testing.T) {
	b, err := os.ReadFile(docPath)
	require.NoError(t, err)
	doc := string(b)
	matches := exampleRe.FindAllStringSubmatchIndex(doc, -1)
	require.NotEmpty(t, matches, "docs/SCRIPT.md has no examples")
	var rebuilt strings.Builder
	last := 0
	for i, m := range matches {
		src, want := doc[m[2]:m[3]], doc[m[4]:m[5]]
		line := strings.Count(doc[:m[2]], "\n") + 1
		var out bytes.Buffer
		err := New(Options{CheckEveryCommand: true}).Exec(&out, "SCRIPT.md", line, []byte(src))
		require.NoError(t, err, "example %d (line %d)", i+1, line)
		if !rewriting() {
			assert.Equal(t, want, out.String(), "example %d (line %d)", i+1, line)
		}
		rebuilt.WriteString(doc[last:m[4]])
		rebuilt.WriteString(out.String())
		last = m[5]
	}
	rebuilt.WriteString(doc[last:])
	const begin, end = "<!-- commands:begin -->\n", "<!-- commands:end -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "docs/SCRIPT.md lacks the command reference markers")
	if !rewriting() {
		assert.Equal(t, reference(), doc[i+len(begin):j], "the command reference is out of date: go test ./engine/script/ -rewrite")
		return
	}
	text := rebuilt.String()
	i, j = strings.Index(text, begin), strings.Index(text, end)
	text = text[:i+len(begin)] + reference() + text[j:]
	require.NoError(t, os.WriteFile(docPath, []byte(text), 0o644))
}
