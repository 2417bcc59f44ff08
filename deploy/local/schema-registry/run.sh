#!/usr/bin/env bash
# Start the local schema registry (Apicurio, provisioned by provision.sh) in the foreground.
#   usage: deploy/local/schema-registry/run.sh <runnerJar> <port> <dataDir>
# Storage: an H2 database file in <dataDir>, so schema ids survive a restart (records on Kafka name
# them for good). Listens on 127.0.0.1 only. Ready when /health/ready answers 200.
set -euo pipefail
[[ $# -eq 3 || $# -eq 4 ]] || { echo "usage: $0 <runnerJar> <port> <dataDir> [<host>]" >&2; exit 2; }
jar="$1"; port="$2"; data="$3"; host="${4:-127.0.0.1}"
[[ -f "$jar" ]] || { echo "[schema-registry-run] no jar at $jar (run provision.sh)" >&2; exit 1; }
mkdir -p "$data"
data="$(cd "$data" && pwd)"
export HTTP_PORT="$port"
# <host>: 127.0.0.1 unless the stack listens elsewhere (npm run play: the pods' network gateway).
export QUARKUS_HTTP_HOST="$host"
export REGISTRY_DATASOURCE_URL="jdbc:h2:file:$data/registry"
# The JIT's first tier only: the registry does little work, and starts in about half the time.
# shellcheck disable=SC2086 # the heap option is meant to be word-split
exec java ${SCHEMA_REGISTRY_HEAP_OPTS:--Xms64m -Xmx256m} -XX:TieredStopAtLevel=1 -Xshare:auto -Djava.awt.headless=true -jar "$jar"
