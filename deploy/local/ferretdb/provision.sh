#!/usr/bin/env bash
# Build (once) and cache a local FerretDB server (SQLite backend) from source.
#
# The server is the small wrapper in this folder (main.go), built against the
# FerretDB version pinned in go.mod/go.sum. The binary is cached outside the repo:
#   ${SVC_CACHE_DIR:-$HOME/.cache/svc}/bin/ferretdb-<version>
# Progress goes to stderr; the LAST line on stdout is the absolute binary path.
# A second run with the same sources prints the cached path immediately.
#
# Binary flags: -listen-addr (default 127.0.0.1:27017), -state-dir DIR (required),
#               -log-level debug|info|warn|error (default info), -version
set -euo pipefail

log() { printf 'ferretdb/provision: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="github.com/FerretDB/FerretDB"

for f in main.go go.mod go.sum; do
  [[ -f "$here/$f" ]] || die "missing $here/$f"
done

# Single source of truth for the version: the require line in go.mod.
version="$(awk -v m="$module" '($1 == m) {print $2} ($1 == "require" && $2 == m) {print $3}' "$here/go.mod" | head -n1)"
[[ -n "$version" ]] || die "cannot find the $module version in $here/go.mod"

cache="${SVC_CACHE_DIR:-$HOME/.cache/svc}"
bin_dir="$cache/bin"
out="$bin_dir/ferretdb-$version"
stamp="$out.srcsum"

srcsum() { cat "$here/main.go" "$here/go.mod" "$here/go.sum" | sha256sum | cut -d' ' -f1; }
want_sum="$(srcsum)"

is_fresh() { [[ -x "$out" && -f "$stamp" && "$(cat "$stamp")" == "$want_sum" ]]; }

if is_fresh; then
  printf '%s\n' "$out"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "'go' not found in PATH (need Go >= 1.24)"
mkdir -p "$bin_dir" || die "cannot create $bin_dir"

# Serialise concurrent provisioning runs.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin_dir/.ferretdb.lock"
  flock 9
  if is_fresh; then
    printf '%s\n' "$out"
    exit 0
  fi
fi

go_ver="$(GOTOOLCHAIN=local go env GOVERSION)"
log "building FerretDB $version with $go_ver (first run can take several minutes)..."

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
start=$SECONDS
(
  cd "$here"
  # -mod=readonly: use the committed go.sum, never rewrite files in the repo.
  GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 \
    go build -trimpath -buildvcs=false -ldflags='-s -w' -o "$tmp" .
) >&2 || die "go build failed (Go >= 1.24 is required; module downloads need the Go module proxy)"

"$tmp" -version >/dev/null 2>&1 || die "built binary does not run: $tmp"
mv -f "$tmp" "$out"
printf '%s\n' "$want_sum" >"$stamp"
trap - EXIT
log "built $out in $((SECONDS - start))s"
printf '%s\n' "$out"
