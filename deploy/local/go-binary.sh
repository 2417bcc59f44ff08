#!/usr/bin/env bash
# Shared by ferretdb/provision.sh and mailpit/provision.sh: build one Go binary (once) from a
# folder whose go.mod pins the module version and whose go.sum pins every hash, and cache it at
#   ${SVC_CACHE_DIR:-$HOME/.cache/svc}/bin/<name>-<version>
# A .srcsum stamp beside it records the sources, so editing them rebuilds. Progress goes to stderr;
# the LAST line on stdout is the absolute binary path.
#
# usage: go_binary <name> <dir> <module> <package> <check-args> [extra ldflags] -- <files hashed>
set -euo pipefail

go_binary() {
  local name="$1" dir="$2" module="$3" package="$4" check="$5" ldflags="$6"
  shift 6
  [[ "${1:-}" == "--" ]] && shift
  local log_prefix="$name/provision:"
  local f
  for f in "$@"; do
    [[ -f "$dir/$f" ]] || { echo "$log_prefix ERROR: missing $dir/$f" >&2; return 1; }
  done

  local version
  version="$(awk -v m="$module" '($1 == m) {print $2} ($1 == "require" && $2 == m) {print $3}' "$dir/go.mod" | head -n1)"
  [[ -n "$version" ]] || { echo "$log_prefix ERROR: cannot find the $module version in $dir/go.mod" >&2; return 1; }

  local bin_dir="${SVC_CACHE_DIR:-$HOME/.cache/svc}/bin"
  local out="$bin_dir/$name-$version"
  local stamp="$out.srcsum"
  local want_sum
  want_sum="$(cd "$dir" && cat "$@" | sha256sum | cut -d' ' -f1)"
  fresh() { [[ -x "$out" && -f "$stamp" && "$(cat "$stamp")" == "$want_sum" ]]; }

  if fresh; then printf '%s\n' "$out"; return 0; fi

  command -v go >/dev/null 2>&1 || { echo "$log_prefix ERROR: 'go' not found in PATH (need Go >= 1.24)" >&2; return 1; }
  mkdir -p "$bin_dir" || { echo "$log_prefix ERROR: cannot create $bin_dir" >&2; return 1; }

  # Serialise concurrent provisioning runs (two test processes starting at once).
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$bin_dir/.$name.lock"
    flock 9
    if fresh; then printf '%s\n' "$out"; return 0; fi
  fi

  echo "$log_prefix building $name $version with $(GOTOOLCHAIN=local go env GOVERSION) (first run takes a minute or two)..." >&2
  local tmp="$out.tmp.$$" start=$SECONDS
  # -mod=readonly: use the committed go.sum, never rewrite files in the repo.
  if ! (cd "$dir" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 \
        go build -trimpath -buildvcs=false -ldflags="-s -w $ldflags" -o "$tmp" "$package") >&2; then
    rm -f "$tmp"
    echo "$log_prefix ERROR: go build failed (Go >= 1.24 is required; module downloads need the Go module proxy)" >&2
    return 1
  fi
  # shellcheck disable=SC2086 # check args are a word list
  if ! "$tmp" $check >/dev/null 2>&1; then
    rm -f "$tmp"
    echo "$log_prefix ERROR: built binary does not run" >&2
    return 1
  fi
  mv -f "$tmp" "$out"
  printf '%s\n' "$want_sum" >"$stamp"
  echo "$log_prefix built $out in $((SECONDS - start))s" >&2
  printf '%s\n' "$out"
}
