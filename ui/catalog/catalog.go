// Package catalog lists the scenarios the page offers. The page (wasm/)
// and the browser tests (ui/e2e) both use it, so a test can run natively
// exactly what the page runs and compare.
package catalog

import "github.com/pagesim/pagesim/ui/app"

// Scenarios returns the scenarios in the order the panel lists them; the
// first is the default. The patch scenarios join this list when
// engine/scenario implements app.Scenario.
func Scenarios() []app.Scenario {
	return []app.Scenario{app.Churn{}}
}

// New returns the catalog of Scenarios.
func New() (*app.Catalog, error) { return app.NewCatalog(Scenarios()...) }
