package app

// links.go is where the page points its readers: each scenario's patch
// thread on lore.kernel.org (the seed's links, Spec.Lore), its section of
// docs/FIDELITY.md, and the Go file that holds it, at the repository base
// URL the site was built with.
//
// A link out is navigation, never a request the page makes: the panel
// renders plain anchors that open in a new tab, so the page's
// Content-Security-Policy and its rule that nothing is fetched from
// another origin are untouched.

import (
	"net/url"
	"reflect"
	"runtime"
	"strings"

	"github.com/pagesim/pagesim/engine/scenario"
)

// SourceURL is the base URL of the repository's files, ending in '/':
// a file's URL is SourceURL + its path in the repository. build.sh sets it
// from PAGESIM_SOURCE_URL (go build -ldflags -X); the default is the
// repository of the module path.
var SourceURL = "https://github.com/pagesim/pagesim/blob/main/"

// Link is an anchor of the panel: Text is shown, URL opened in a new tab.
type Link struct {
	Text, URL string
}

// SourceBase returns SourceURL with a trailing '/', or "" when it is not
// an http(s) URL (a bad PAGESIM_SOURCE_URL gives no source links rather
// than broken ones).
func SourceBase() string {
	u, err := url.Parse(SourceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	if !strings.HasSuffix(SourceURL, "/") {
		return SourceURL + "/"
	}
	return SourceURL
}

// SourceFile returns the repository path of the Go file that defines the
// scenario: the file of its Start function ("engine/scenario/
// thp_thisnode.go"), found from the binary's own line table, so a new
// scenario needs no list to be kept. It is "" when the path has no
// engine/ folder (a scenario made by a test).
func SourceFile(s *scenario.Spec) string {
	if s.Start == nil {
		return ""
	}
	f := runtime.FuncForPC(reflect.ValueOf(s.Start).Pointer())
	if f == nil {
		return ""
	}
	file, _ := f.FileLine(f.Entry())
	file = "/" + strings.ReplaceAll(file, "\\", "/")
	i := strings.LastIndex(file, "/engine/")
	if i < 0 {
		return ""
	}
	return file[i+1:]
}

// FidelityAnchor is the anchor of the scenario's section of
// docs/FIDELITY.md: the file holds `<a id="ID"></a>` at the head of each
// seed scenario's section (TestEveryScenarioHasItsSourceFileAndFidelitySection checks
// it). Scenarios that are no seed's (the playground) have none.
func FidelityAnchor(s *scenario.Spec) string {
	if s.Seed == "" {
		return ""
	}
	return s.ID
}

// Links returns the scenario's links out, in the order the panel shows
// them: the patch thread(s), the fidelity notes, the source.
func Links(s *scenario.Spec) []Link {
	var out []Link
	for i, l := range s.Lore {
		u, err := url.Parse(l)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			continue
		}
		// Spec.Lore names the patch's posting first, then the messages
		// of its thread (a report, a reply, a later version).
		what := "the patch: "
		if i > 0 {
			what = "its thread: "
		}
		out = append(out, Link{Text: what + u.Host + strings.TrimSuffix(u.Path, "/"), URL: l})
	}
	base := SourceBase()
	if base == "" {
		return out
	}
	if a := FidelityAnchor(s); a != "" {
		out = append(out, Link{Text: "seed vs pagesim in docs/FIDELITY.md", URL: base + "docs/FIDELITY.md#" + a})
	}
	if f := SourceFile(s); f != "" {
		out = append(out, Link{Text: "the scenario's source (" + f[strings.LastIndex(f, "/")+1:] + ")", URL: base + f})
	}
	return out
}
