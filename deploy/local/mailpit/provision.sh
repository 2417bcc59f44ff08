#!/usr/bin/env bash
# Build (once) and cache Mailpit (SMTP sink + HTTP API) from source, at the version pinned by the
# `tool github.com/axllent/mailpit` line of this folder's go.mod (a plain `go install module@v`
# needs the proxy's version list, which is not always reachable; the wrapper module avoids it).
# The module zip lacks the compiled web UI bundle: SMTP and the REST API work, the browser UI not.
# Prints the binary path last.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../go-binary.sh
source "$here/../go-binary.sh"
version="$(awk '$1 == "github.com/axllent/mailpit" {print $2}' "$here/go.mod" | head -n1)"
go_binary mailpit "$here" github.com/axllent/mailpit github.com/axllent/mailpit "--help" \
  "-X github.com/axllent/mailpit/config.Version=$version" -- go.mod go.sum
