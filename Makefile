# pagesim: `make run` builds the site and serves it (on ADDR, default
# localhost:8080); `make test` runs every test.
GO ?= go
export PATH := $(PATH):$(shell $(GO) env GOROOT)/lib/wasm

.PHONY: run test bench bench-page pgo site pagesim vet unit jstest browser fuzz

# run serves the page on ADDR (make run ADDR=localhost:8081); it says so
# before building anything when the address is busy.
ADDR ?= localhost:8080
run:
	$(GO) run ./internal/sitetool check-addr $(ADDR)
	$(MAKE) pagesim
	./bin/pagesim serve --addr $(ADDR)

site:
	./build.sh

pagesim: site
	$(GO) build -trimpath -o bin/pagesim ./cmd/pagesim

# vet also checks that every doc comment starts with the name it documents
# (internal/doccheck), and that no comment or doc cites a document the
# repository does not contain (cite the kernel source or the patch thread).
vet:
	$(GO) vet ./...
	$(GO) vet -tags browser ./ui/e2e/
	GOOS=js GOARCH=wasm $(GO) vet ./...
	$(GO) run ./internal/doccheck .
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*'))" \
		|| { gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*'); echo 'vet: the files above are not gofmt-formatted'; exit 1; }
	@! grep -rnE 'spec [ABC]\b|card 00[0-9]|kernel notes|\bkref\b|\.\./shared/|/work/' \
		--include='*.go' --include='*.md' --include='*.vugu' --exclude-dir=bin --exclude-dir=.git . \
		|| { echo 'vet: the lines above cite documents the repository does not contain'; exit 1; }

# unit needs only Go; it includes the check that the generated Vugu code
# is up to date. engine/scenario runs every scenario's variants with
# invariant checks: about 3-5 min on 2 quiet cores, near go test's default
# 10 min per package on a loaded machine, hence the longer timeout.
unit:
	$(GO) test -timeout 14m ./...

# browser runs the page in headless Chromium (ui/e2e, behind the browser
# tag: build.sh writes cmd/pagesim/site, then chromedp drives the page).
browser:
	$(GO) test -tags browser -timeout 14m ./ui/e2e/

# Packages that use syscall/js (but not Ebiten) run their tests under Node.
jstest:
	GOOS=js GOARCH=wasm $(GO) test ./ui/jsbridge/...

test: vet unit jstest browser

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# bench-page runs the page's measurements (start-up of first visits, the
# engine in wasm against native, click latency and frame times, a link's
# catch-up in the engine workers) and logs
# their figures for docs/PERFORMANCE.md; they are not tests.
bench-page:
	PAGESIM_MEASURE=1 $(GO) test -tags browser -count=1 -v -run 'TestStartUp$$|TestTheEngineBenchmarkRunsInTheBrowser$$|TestTheMapStaysResponsive$$|TestThePageLoadsAndDraws$$|TestThePagesDefaultRunAtEachScale$$|TestCatchingUpToALinksTimeAtScale1$$' ./ui/e2e/

# pgo rewrites the profile both binaries are built with (Go's profile-guided
# optimization: go build reads default.pgo in the main package's folder, so
# wasm/ and cmd/pagesim/ hold the same file). It profiles the engine
# workloads of internal/bench, which include running a scenario in the page's
# slices. The map's drawing is left out on purpose: inlined by the profile,
# mapview.Render ran twice as slow in the browser (docs/PERFORMANCE.md).
pgo:
	mkdir -p bin
	$(GO) test -run '^$$' -bench . -benchtime 2s -cpuprofile bin/pgo-engine.pprof -o bin/pgo-engine.test ./internal/bench
	$(GO) tool pprof -proto -output bin/default.pgo bin/pgo-engine.pprof
	cp bin/default.pgo wasm/default.pgo
	cp bin/default.pgo cmd/pagesim/default.pgo

# fuzz runs every fuzz target for FUZZTIME each with one worker (the machine
# is shared); docs/RELIABILITY.md records how long each was run. The default
# test run only replays their seeds.
FUZZTIME ?= 1m
FUZZ_TARGETS = engine/procfs:FuzzImport engine/script:FuzzScript \
	engine/procfs:FuzzParseBuddyinfo engine/procfs:FuzzParsePagetypeinfo \
	engine/procfs:FuzzParseZoneinfo engine/procfs:FuzzParseVmstat \
	engine/procfs:FuzzParseSysctl engine/scenario:FuzzParse \
	engine/script:FuzzParse engine/mm:FuzzParseGFP engine/mm:FuzzSysctlValues \
	ui/app:FuzzDecodeFragment
fuzz:
	set -e; for t in $(FUZZ_TARGETS); do \
		$(GO) test -run '^$$' -fuzz "^$${t##*:}\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel 1 ./$${t%%:*}; \
	done
