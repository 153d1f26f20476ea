//go:build browser && !(js && wasm)

package e2e

// The page's three audiences, one browser test each (the fourth is the
// embed): the person who shares a link, the person who reads it, and the
// person who presents it.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The one who shares: "Copy link" gives the whole URL, and pasted into a
// browser that has never seen the page (a new context: no cache, no
// storage) it opens the same run, to the same table.
func TestACopiedLinkOpensTheSameTableInAFreshBrowser(t *testing.T) {
	p := Open(t, "v1/playground?mem=64&seed=5&x=5")
	p.SetField("param-fill", "90")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).link.includes("fill=90")`)
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs > 1.5e9`)
	p.Click("play")
	d := p.WaitSettled()
	p.GrantClipboard()
	p.Click("copy-link")
	p.WaitJS(`document.querySelector("#copy-link ~ .copied").textContent === "Copied."`)
	copied := Eval[string](p, `navigator.clipboard.readText()`)
	assert.Equal(t, server.URL+"/#"+d.Link, copied, "the whole URL, not a bare fragment")
	assert.Equal(t, copied, Eval[string](p, `document.getElementById("permalink").value`))
	assert.Contains(t, copied, "fill=90")
	table := p.Text("results")
	require.Contains(t, table, "allocations")

	q := OpenURL(t, copied)
	e := q.WaitSettled()
	assert.Equal(t, d.NowNS, e.NowNS)
	assert.Equal(t, d.Link, e.Link)
	assert.Equal(t, table, q.Text("results"), "the same table, byte for byte")
	assert.Equal(t, p.Text("status"), q.Text("status"))
}

// Back and Forward walk through the user's own changes; playing adds no
// entry.
func TestBackAndForwardWalkTheUsersChanges(t *testing.T) {
	p := Open(t, "v1/playground?mem=64&x=10")
	n0 := Eval[int](p, `history.length`)
	p.SetField("param-fill", "90")
	p.WaitJS(`location.hash.includes("fill=90")`)
	p.SetField("seed", "7")
	p.WaitJS(`location.hash.includes("seed=7")`)
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs > 1.2e9`)
	p.WaitJS(`location.hash.includes("&t=")`)
	p.Click("play")
	p.WaitSettled()
	assert.Equal(t, n0+2, Eval[int](p, `history.length`), "two changes, two entries; playing none")

	back := func(want string) {
		t.Helper()
		gen := p.Debug().Gen
		Eval[bool](p, `(() => { history.back(); return true; })()`)
		p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).gen > %d`, gen))
		p.WaitSettled()
		assert.Equal(t, want, Eval[string](p, `document.getElementById("seed").value`)+"/"+Eval[string](p, `document.getElementById("param-fill").value`))
	}
	back("1/90")
	back("1/85")
	gen := p.Debug().Gen
	Eval[bool](p, `(() => { history.forward(); return true; })()`)
	p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).gen > %d`, gen))
	p.WaitJS(`document.getElementById("param-fill").value === "90"`)
	assert.True(t, strings.HasPrefix(p.Debug().Link, "v1/playground?seed=1&x=10&mem=64&fill=90"), p.Debug().Link)
}

// The panel links to the patch thread, the scenario's fidelity notes and
// its source, each in a new tab; showing them fetches nothing (the
// harness fails the test on a request that leaves localhost).
func TestThePanelLinksOutWithoutARequest(t *testing.T) {
	p := Open(t, openingLink(t))
	links := Eval[[]string](p, `[...document.querySelectorAll("#links a")].map(a => a.target + " " + a.rel + " " + a.href)`)
	require.Len(t, links, 3)
	assert.Equal(t, "_blank noopener noreferrer https://lore.kernel.org/linux-mm/20180820032204.9591-3-aarcange@redhat.com/", links[0])
	assert.True(t, strings.HasSuffix(links[1], "/docs/FIDELITY.md#thp-thisnode"), links[1])
	assert.True(t, strings.HasSuffix(links[2], "/engine/scenario/thp_thisnode.go"), links[2])
}
