#!/usr/bin/env bash
# Resolve the Kafka broker runtime jars from Maven Central into a cache outside the repo.
#   usage: deploy/local/kafka/provision.sh
# Prints the absolute libs dir as the LAST line of stdout; progress goes to stderr.
# Cache: ${SVC_CACHE_DIR:-$HOME/.cache/svc}/kafka-<version>/libs (reuses ~/.m2 too).
# Idempotent: once complete, a .complete marker makes later runs instant.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/pom.xml"

log() { echo "[kafka-provision] $*" >&2; }
die() { echo "[kafka-provision] ERROR: $*" >&2; exit 1; }

[[ -f "$pom" ]] || die "missing $pom"
version="$(sed -n 's:.*<kafka.version>\([^<]*\)</kafka.version>.*:\1:p' "$pom" | head -n1)"
[[ -n "$version" ]] || die "could not read <kafka.version> from $pom"

cache_root="${SVC_CACHE_DIR:-$HOME/.cache/svc}"
dest="$cache_root/kafka-$version"
libs="$dest/libs"
marker="$dest/.complete"
# The marker records a hash of the pom so that editing the dependency list re-provisions.
pom_hash="$(sha256sum "$pom" | cut -d' ' -f1)"

if [[ -f "$marker" && "$(cat "$marker")" == "$pom_hash" && -d "$libs" ]]; then
  log "cached: $libs"
  echo "$libs"
  exit 0
fi

# --- prerequisites ---------------------------------------------------------
command -v java >/dev/null 2>&1 || die "java not found on PATH (need JDK/JRE 17+)"
java_ver="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n1)"
java_major="${java_ver#1.}"; java_major="${java_major%%.*}"
[[ "$java_major" =~ ^[0-9]+$ ]] || die "could not determine java version (got '$java_ver')"
(( java_major >= 17 )) || die "java $java_ver found, need 17+"
command -v mvn >/dev/null 2>&1 || die "mvn not found on PATH (apt-get install maven)"

# --- resolve into a temp dir, then atomically rename ------------------------
mkdir -p "$cache_root"
tmp="$(mktemp -d "$cache_root/.kafka-$version.tmp.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM   # make sure the EXIT cleanup runs on signals too

log "resolving Apache Kafka $version runtime jars via Maven (first run downloads ~45 MB)..."
# -B: batch mode. mvn output goes to stderr so stdout carries only the result; the
# sed drops the stray ANSI resets Debian's Maven 3.8 prints even with -q.
if ! mvn -B -q -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
      -DoutputDirectory="$tmp/libs" -DincludeScope=runtime 2>&1 \
    | sed -u 's/\x1b\[[0-9;]*m//g' >&2; then
  die "mvn dependency:copy-dependencies failed (is Maven Central reachable?)"
fi
ls "$tmp/libs"/kafka_2.13-"$version".jar >/dev/null 2>&1 \
  || die "kafka_2.13-$version.jar missing from resolved jars"
printf '%s\n' "$pom_hash" > "$tmp/.complete"

# Replace any stale/incomplete previous copy. `mv -T` is a plain rename(2): it never
# nests $tmp inside $dest, and fails if $dest reappeared (concurrent provision).
if [[ -f "$marker" && "$(cat "$marker")" == "$pom_hash" ]]; then
  log "another provision finished first; using it"
elif [[ -e "$dest" ]]; then
  old="$cache_root/.kafka-$version.old.$$"
  mv -T "$dest" "$old"
  rm -rf "$old"
fi
if [[ -f "$marker" && "$(cat "$marker")" == "$pom_hash" ]]; then
  rm -rf "$tmp"
elif ! mv -T "$tmp" "$dest" 2>/dev/null; then
  [[ -f "$marker" && "$(cat "$marker")" == "$pom_hash" ]] \
    || die "could not move $tmp to $dest"
  log "another provision finished first; using it"
  rm -rf "$tmp"
fi
trap - EXIT

log "ready: $(ls "$libs" | wc -l) jars in $libs"
echo "$libs"
