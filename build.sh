#!/usr/bin/env bash
# build.sh writes the complete static site into cmd/pagesim/site (embedded
# by `pagesim serve`) and, if given, copies it to the folder in $1.
set -euo pipefail
cd "$(dirname "$0")"
echo "build.sh: the browser app is not built yet" >&2
