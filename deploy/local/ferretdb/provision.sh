#!/usr/bin/env bash
# Build (once) and cache a local FerretDB server (SQLite backend) from source: the small wrapper in
# this folder (main.go) over FerretDB's embeddable package, at the version pinned in go.mod/go.sum.
# A plain `go install` of FerretDB's own command panics on its missing version file, hence the wrapper.
# Prints the binary path last. Binary flags: -listen-addr, -state-dir DIR, -log-level, -version.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../go-binary.sh
source "$here/../go-binary.sh"
go_binary ferretdb "$here" github.com/FerretDB/FerretDB . "-version" "" -- main.go go.mod go.sum
