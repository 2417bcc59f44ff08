#!/usr/bin/env bash
# Build (once) and cache promtool, Prometheus' rule checker, from source at the version pinned by the
# `tool github.com/prometheus/prometheus/cmd/promtool` line of this folder's go.mod (the wrapper
# module, as for Mailpit, so the build needs no version list from the proxy). `npm test` runs
# `promtool check rules` on deploy/prometheus/alerts.yml with it. Prints the binary path last.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../go-binary.sh
source "$here/../go-binary.sh"
go_binary promtool "$here" github.com/prometheus/prometheus github.com/prometheus/prometheus/cmd/promtool "--version" "" -- go.mod go.sum
