#!/usr/bin/env bash
# Build (once) and cache a local Mailpit SMTP/web mail catcher from source.
#
# The version is pinned by the `tool github.com/axllent/mailpit` entry in this
# folder's go.mod, with every module hash pinned in the committed go.sum.
# (A plain `go install github.com/axllent/mailpit@vX` needs the proxy's
# version list for its deprecation check, which is not always reachable;
# the wrapper module avoids that and makes the dependency set reproducible.)
# The binary is cached outside the repo:
#   ${SVC_CACHE_DIR:-$HOME/.cache/svc}/bin/mailpit-<version>
# Progress goes to stderr; the LAST line on stdout is the absolute binary path.
# A second run with the same pins prints the cached path immediately.
#
# Note: module zips do not contain the compiled web UI bundle (server/ui/dist),
# so the browser UI is not functional; the SMTP server and the REST API are.
set -euo pipefail

log() { printf 'mailpit/provision: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="github.com/axllent/mailpit"

for f in go.mod go.sum; do
  [[ -f "$here/$f" ]] || die "missing $here/$f"
done

version="$(awk -v m="$module" '($1 == m) {print $2} ($1 == "require" && $2 == m) {print $3}' "$here/go.mod" | head -n1)"
[[ -n "$version" ]] || die "cannot find the $module version in $here/go.mod"

cache="${SVC_CACHE_DIR:-$HOME/.cache/svc}"
bin_dir="$cache/bin"
out="$bin_dir/mailpit-$version"
stamp="$out.srcsum"

want_sum="$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -d' ' -f1)"
is_fresh() { [[ -x "$out" && -f "$stamp" && "$(cat "$stamp")" == "$want_sum" ]]; }

if is_fresh; then
  printf '%s\n' "$out"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "'go' not found in PATH (need Go >= 1.24)"
mkdir -p "$bin_dir" || die "cannot create $bin_dir"

if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin_dir/.mailpit.lock"
  flock 9
  if is_fresh; then
    printf '%s\n' "$out"
    exit 0
  fi
fi

go_ver="$(GOTOOLCHAIN=local go env GOVERSION)"
log "building Mailpit $version with $go_ver (first run can take a few minutes)..."

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
start=$SECONDS
(
  cd "$here"
  # -mod=readonly: use the committed go.sum, never rewrite files in the repo.
  GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 \
    go build -trimpath -buildvcs=false \
      -ldflags="-s -w -X $module/config.Version=$version" \
      -o "$tmp" "$module"
) >&2 || die "go build failed (Go >= 1.24 is required; module downloads need the Go module proxy)"

# (not `mailpit version`: that one queries GitHub for newer releases)
"$tmp" --help >/dev/null 2>&1 || die "built binary does not run: $tmp"
mv -f "$tmp" "$out"
printf '%s\n' "$want_sum" >"$stamp"
trap - EXIT
log "built $out in $((SECONDS - start))s"
printf '%s\n' "$out"
