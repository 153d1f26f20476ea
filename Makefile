# pagesim: `make run` builds the site and serves it; `make test` runs every test.
GO ?= go
export PATH := $(PATH):$(shell $(GO) env GOROOT)/lib/wasm

.PHONY: run test bench site pagesim vet unit jstest

run: pagesim
	./bin/pagesim serve

site:
	./build.sh

pagesim: site
	$(GO) build -trimpath -o bin/pagesim ./cmd/pagesim

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...

# unit includes the browser tests (ui/e2e: build.sh, then headless
# Chromium) and the check that the generated Vugu code is up to date.
unit:
	$(GO) test ./...

# Packages that use syscall/js (but not Ebiten) run their tests under Node.
jstest:
	GOOS=js GOARCH=wasm $(GO) test ./ui/jsbridge/...

test: vet unit jstest

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
