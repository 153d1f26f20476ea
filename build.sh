#!/usr/bin/env bash
# build.sh writes the complete static site into cmd/pagesim/site (embedded
# by `pagesim serve`) and, if given, copies it to the folder in $1, ready
# for any static host: index.html, style.css, boot.js, wasm_exec.js (from
# the Go that built the binary), vugu-render.js, pagesim.wasm, the engine
# workers' engine-worker.js and pagesim-engine.wasm, and .gz/.br copies of
# each. It needs only Go.
#
# Rebuilds are incremental: go build skips the link when nothing changed,
# files are replaced only when their bytes differ, and compressed copies
# are redone only for files newer than them. PAGESIM_BROTLI_QUALITY=11
# gives the smallest .br (slower; default 9).
set -euo pipefail
cd "$(dirname "$0")"

site=cmd/pagesim/site
cache=bin/site-cache
mkdir -p "$site" "$cache"

# The wasm binary is built against a copy of Ebiten whose built-in shaders
# are compiled here rather than in the visitor's browser at start-up
# and which follows a change of devicePixelRatio while the page runs
# (internal/sitetool/ebiten.go says why and how; PAGESIM_EBITEN_PATCH=off skips
# it and builds with Ebiten as it is: slower to start, and the map keeps the
# density it was loaded at).
modfile=-modfile=bin/ebiten/wasm.mod
if [ "${PAGESIM_EBITEN_PATCH:-on}" != off ]; then
	go run ./internal/sitetool ebiten-patch bin/ebiten
else
	modfile=-mod=readonly # go build's default: Ebiten as go.mod has it
fi
# go build reads wasm/default.pgo, the profile `make pgo` writes: Go's
# profile-guided inlining matters more in wasm, where calls are dear.
# PAGESIM_SOURCE_URL is the base URL of the repository's files that the
# page's links to a scenario's source and to docs/FIDELITY.md start with
# (default: https://github.com/pagesim/pagesim/blob/main/).
ldflags='-s -w'
if [ -n "${PAGESIM_SOURCE_URL:-}" ]; then
	case "$PAGESIM_SOURCE_URL" in
	http://* | https://*) ;;
	*) echo "build.sh: PAGESIM_SOURCE_URL must be an http(s) URL, got '$PAGESIM_SOURCE_URL'" >&2; exit 1 ;;
	esac
	case "$PAGESIM_SOURCE_URL" in
	*[[:space:]\'\"]*) echo "build.sh: PAGESIM_SOURCE_URL must not hold spaces or quotes" >&2; exit 1 ;;
	esac
	ldflags="$ldflags -X github.com/pagesim/pagesim/ui/app.SourceURL=$PAGESIM_SOURCE_URL"
fi
echo "build.sh: building pagesim.wasm" >&2
GOOS=js GOARCH=wasm go build "$modfile" -trimpath -ldflags="$ldflags" -o "$cache/pagesim.wasm" ./wasm
# The engine workers' binary (wasm/engine: the engine without Ebiten or
# Vugu), which static/engine-worker.js runs off the page's main thread.
echo "build.sh: building pagesim-engine.wasm" >&2
GOOS=js GOARCH=wasm go build "$modfile" -pgo=wasm/default.pgo -trimpath -ldflags='-s -w' -o "$cache/pagesim-engine.wasm" ./wasm/engine
# sitetool put copies through a temporary file, only if the bytes differ.
go run ./internal/sitetool put "$site" "$cache/pagesim.wasm" "$cache/pagesim-engine.wasm" static/index.html static/style.css static/boot.js \
	static/engine-worker.js "$(go env GOROOT)/lib/wasm/wasm_exec.js"
go run ./internal/sitetool vugu-script "$site/vugu-render.js"
go run ./internal/sitetool compress "$site"

if [ $# -ge 1 ]; then
	out=$1
	mkdir -p "$out"
	files=()
	for f in "$site"/*; do
		case "$(basename "$f")" in
		placeholder.txt | *.tmp) ;;
		*) files+=("$f") ;;
		esac
	done
	go run ./internal/sitetool put "$out" "${files[@]}"
	echo "build.sh: the site is in $out" >&2
fi
ls -l "$site" | awk 'NR > 1 { printf "build.sh: %10d %s\n", $5, $9 }' >&2
