package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEachScenarioLinksItsPatchItsFidelityNotesAndItsSource(t *testing.T) {
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	in, ok := cat.Lookup("thp-thisnode")
	require.True(t, ok)
	assert.Equal(t, []Link{
		{"the patch: lore.kernel.org/linux-mm/20180820032204.9591-3-aarcange@redhat.com", "https://lore.kernel.org/linux-mm/20180820032204.9591-3-aarcange@redhat.com/"},
		{"seed vs pagesim in docs/FIDELITY.md", "https://github.com/pagesim/pagesim/blob/main/docs/FIDELITY.md#thp-thisnode"},
		{"the scenario's source (thp_thisnode.go)", "https://github.com/pagesim/pagesim/blob/main/engine/scenario/thp_thisnode.go"},
	}, Links(in))
	nf, ok := cat.Lookup("nofrag-watermark")
	require.True(t, ok)
	var texts []string
	for _, l := range Links(nf)[:3] {
		texts = append(texts, l.Text)
	}
	assert.Equal(t, []string{
		"the patch: lore.kernel.org/all/20261028132638.2560361-1-kirill@shutemov.name",
		"its thread: lore.kernel.org/all/4aa14b41-9b89-494c-8825-55fffd5a541c@arm.com",
		"its thread: lore.kernel.org/all/auCDnqJc7fsBpUW2@thinkstation",
	}, texts, "only the first lore link is the patch; a report and a reply are its thread")
	pg, _ := cat.Lookup("playground")
	assert.Equal(t, []Link{{"the scenario's source (playground.go)", "https://github.com/pagesim/pagesim/blob/main/engine/scenario/playground.go"}}, Links(pg),
		"the playground is no seed's: no patch, no fidelity notes")
}

func TestTheSourceBaseIsSetAtBuildTime(t *testing.T) {
	defer func(s string) { SourceURL = s }(SourceURL)
	SourceURL = "https://git.example.org/pagesim/tree"
	assert.Equal(t, "https://git.example.org/pagesim/tree/", SourceBase())
	pg, err := DefaultCatalog()
	require.NoError(t, err)
	s, _ := pg.Lookup("playground")
	assert.Equal(t, "https://git.example.org/pagesim/tree/engine/scenario/playground.go", Links(s)[0].URL)
	for _, bad := range []string{"", "javascript:alert(1)", "/relative/", "ftp://x/"} {
		SourceURL = bad
		assert.Empty(t, SourceBase(), bad)
		assert.Empty(t, Links(s), "a bad base gives no source links: %q", bad)
	}
}

// Every scenario the page offers has its Go file and, if it is a seed's,
// the anchor of its section in docs/FIDELITY.md (write `<a id="ID"></a>`
// above the section's heading), so no link of the page points nowhere.
func TestEveryScenarioHasItsSourceFileAndFidelitySection(t *testing.T) {
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	root := filepath.Join("..", "..")
	fidelity, err := os.ReadFile(filepath.Join(root, "docs", "FIDELITY.md"))
	require.NoError(t, err)
	for _, s := range cat.Scenarios() {
		f := SourceFile(s)
		require.NotEmpty(t, f, s.ID)
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		require.NoError(t, err, "%s's source", s.ID)
		assert.Contains(t, string(src), `"`+s.ID+`"`, "%s is registered in %s", s.ID, f)
		if a := FidelityAnchor(s); a != "" {
			assert.True(t, strings.Contains(string(fidelity), `<a id="`+a+`"></a>`),
				"docs/FIDELITY.md has no anchor for %s: write <a id=%q></a> above its section's heading", s.ID, a)
		}
	}
}
