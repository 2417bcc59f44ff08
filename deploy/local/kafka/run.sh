#!/usr/bin/env bash
# Start a single-node KRaft (broker+controller) Kafka in the foreground.
#   usage: deploy/local/kafka/run.sh <libsDir> <propertiesFile> <dataDir>
# <libsDir>: output of provision.sh. <propertiesFile>: rendered server.properties.template
# whose log.dirs must equal <dataDir>. Formats <dataDir> on first start only, then
# exec's the JVM (SIGTERM/SIGINT -> clean Kafka shutdown in <1 s; the JVM then exits
# with status 143/130, which is normal). Ready when stdout shows "Kafka Server started"
# (or the PLAINTEXT port accepts connections).
# Env: KAFKA_CLUSTER_ID (22-char base64url UUID; default fixed dev id),
#      KAFKA_HEAP_OPTS (default "-Xms256m -Xmx512m"), KAFKA_JVM_OPTS (extra flags, e.g.
#      -XX:TieredStopAtLevel=1 shaves ~0.3 s off startup at the cost of peak throughput),
#      KAFKA_LOG4J (log4j 1.x properties file; default log4j.properties beside this script).
#      KAFKA_FORMAT_ADD_SCRAM (a SCRAM credential created when the storage is formatted, e.g.
#      'SCRAM-SHA-512=[name=svc,password=...]'; KRaft keeps it in the metadata log, so it only
#      takes effect on a fresh <dataDir>).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "[kafka-run] $*" >&2; }
die() { echo "[kafka-run] ERROR: $*" >&2; exit 1; }

[[ $# -eq 3 ]] || die "usage: $0 <libsDir> <propertiesFile> <dataDir>"
libs="$1"; props="$2"; data="$3"

[[ -d "$libs" ]] || die "libs dir not found: $libs (run provision.sh)"
compgen -G "$libs/kafka_2.13-*.jar" >/dev/null || die "no kafka_2.13 jar in $libs"
[[ -f "$props" ]] || die "properties file not found: $props"
command -v java >/dev/null 2>&1 || die "java not found on PATH"
libs="$(cd "$libs" && pwd)"
props="$(cd "$(dirname "$props")" && pwd)/$(basename "$props")"
log4j="${KAFKA_LOG4J:-$here/log4j.properties}"
[[ -f "$log4j" ]] || die "log4j config not found: $log4j"

cp="$libs/*"
# Fixed id so the data dir is reproducible; any 16-byte base64url UUID works
# (generate one with: java -cp "$libs/*" kafka.tools.StorageTool random-uuid).
cluster_id="${KAFKA_CLUSTER_ID:-q1Sh-9_ISia_zwGINzRvyQ}"
common_opts=(-Djava.awt.headless=true "-Dlog4j.configuration=file:$log4j")

mkdir -p "$data"
data="$(cd "$data" && pwd)"
# Formatting writes to log.dirs, while first-start detection looks at <dataDir>: they must agree.
conf_dirs="$(sed -n 's/^[[:space:]]*log\.dirs[[:space:]]*=[[:space:]]*//p' "$props" | tail -n1 | sed 's/[[:space:]]*$//')"
if [[ -n "$conf_dirs" && "${conf_dirs%/}" != "$data" ]]; then
  die "log.dirs in $props ('$conf_dirs') must be the absolute path of <dataDir> ('$data')"
fi
if [[ ! -f "$data/meta.properties" ]]; then
  log "formatting $data (cluster id $cluster_id)"
  # --ignore-formatted: harmless if a concurrent/previous run already formatted it.
  scram=()
  if [[ -n "${KAFKA_FORMAT_ADD_SCRAM:-}" ]]; then scram=(--add-scram "$KAFKA_FORMAT_ADD_SCRAM"); fi
  java -Xmx256m -XX:TieredStopAtLevel=1 "${common_opts[@]}" -cp "$cp" kafka.tools.StorageTool format \
    -t "$cluster_id" -c "$props" --ignore-formatted "${scram[@]}" >&2 \
    || die "kafka-storage format failed"
fi

# shellcheck disable=SC2086 # heap/JVM opts are intentionally word-split
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} \
  -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
  -XX:+ExplicitGCInvokesConcurrent -Xshare:auto \
  "${common_opts[@]}" ${KAFKA_JVM_OPTS:-} \
  -cp "$cp" kafka.Kafka "$props"
