# pagesim: `make run` builds the site and serves it; `make test` runs every test.
GO ?= go
export PATH := $(PATH):$(shell $(GO) env GOROOT)/lib/wasm

.PHONY: run test bench site pagesim vet unit

run: pagesim
	./bin/pagesim serve

site:
	./build.sh

pagesim: site
	$(GO) build -trimpath -o bin/pagesim ./cmd/pagesim

vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...

unit:
	$(GO) test ./...

test: vet unit

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
