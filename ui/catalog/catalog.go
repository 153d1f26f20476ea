// Package catalog lists the scenarios the page offers. The page (wasm/)
// and the browser tests (ui/e2e) both use it, so a test can run natively
// exactly what the page runs and compare.
package catalog

import (
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/ui/app"
)

// Scenarios returns the scenarios in the order the panel lists them:
// every scenario of engine/scenario (what `pagesim scenarios` lists) by
// seed, the first being the page's default, then the playground.
func Scenarios() []app.Scenario {
	var out []app.Scenario
	for _, s := range scenario.All() {
		out = append(out, FromSpec(s))
	}
	return append(out, app.Churn{})
}

// New returns the catalog of Scenarios.
func New() (*app.Catalog, error) { return app.NewCatalog(Scenarios()...) }
