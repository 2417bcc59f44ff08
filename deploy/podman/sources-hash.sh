#!/usr/bin/env bash
# Prints one SHA-256 over what `npm run image` copies from the tree (the lock file and the schemas, events,
# services and app folders): image.sh labels the image with it, and `npm run play` / `rollout` rebuild an
# image whose label differs, so pods never run code older than the tree.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
{ sha256sum package-lock.json; find schemas events services app -type f -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1
