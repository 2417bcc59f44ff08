#!/usr/bin/env bash
# Build Apicurio Registry (a Confluent-compatible schema registry) from Maven Central into a cache
# outside the repo.
#   usage: deploy/local/schema-registry/provision.sh
# Prints the absolute path of the runnable jar as the LAST line of stdout; progress goes to stderr.
# Cache: ${SVC_CACHE_DIR:-$HOME/.cache/svc}/apicurio-registry-<version>/ (reuses ~/.m2 too).
# Idempotent: a .complete marker holding a hash of the build's inputs makes later runs instant.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/pom.xml"

log() { echo "[schema-registry-provision] $*" >&2; }
die() { echo "[schema-registry-provision] ERROR: $*" >&2; exit 1; }

[[ -f "$pom" ]] || die "missing $pom"
version="$(sed -n 's:.*<apicurio.version>\([^<]*\)</apicurio.version>.*:\1:p' "$pom" | head -n1)"
[[ -n "$version" ]] || die "could not read <apicurio.version> from $pom"

cache_root="${SVC_CACHE_DIR:-$HOME/.cache/svc}"
dest="$cache_root/apicurio-registry-$version"
jar="$dest/schema-registry-1-runner.jar"
marker="$dest/.complete"
inputs_hash="$(cat "$pom" "$here/NoDynamicProperties.java" "$here/application.properties" | sha256sum | cut -d' ' -f1)"

if [[ -f "$marker" && "$(cat "$marker")" == "$inputs_hash" && -f "$jar" ]]; then
  log "cached: $jar"
  echo "$jar"
  exit 0
fi

command -v java >/dev/null 2>&1 || die "java not found on PATH (need JDK 17+)"
command -v mvn >/dev/null 2>&1 || die "mvn not found on PATH (apt-get install maven)"
command -v unzip >/dev/null 2>&1 || die "unzip not found on PATH"

mkdir -p "$cache_root"
tmp="$(mktemp -d "$cache_root/.apicurio-registry-$version.tmp.XXXXXX")"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT; trap 'exit 143' TERM

mvn_quiet() { mvn -B -q -Dstyle.color=never "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' >&2; return "${PIPESTATUS[0]}"; }

log "building Apicurio Registry $version from Maven Central (first run downloads ~150 MB and takes a few minutes)..."
build="$tmp/build"
mkdir -p "$build/src/main/java/local/registry" "$build/src/main/resources" "$tmp/app"
cp "$pom" "$build/pom.xml"
cp "$here/NoDynamicProperties.java" "$build/src/main/java/local/registry/"
mvn_quiet dependency:copy -Dartifact="io.apicurio:apicurio-registry-app:$version" -DoutputDirectory="$tmp/app" \
  || die "could not fetch io.apicurio:apicurio-registry-app:$version (is Maven Central reachable?)"
# Quarkus reads the build's own application.properties: the registry's, then svc's additions.
unzip -p "$tmp/app/apicurio-registry-app-$version.jar" application.properties > "$build/src/main/resources/application.properties" \
  || die "no application.properties in apicurio-registry-app-$version.jar"
cat "$here/application.properties" >> "$build/src/main/resources/application.properties"
(cd "$build" && mvn_quiet package -DskipTests) || die "the Quarkus build of the registry failed"
[[ -f "$build/target/schema-registry-1-runner.jar" ]] || die "the build made no runner jar"

out="$tmp/out"
mkdir -p "$out"
mv "$build/target/schema-registry-1-runner.jar" "$build/target/lib" "$out/"
printf '%s\n' "$inputs_hash" > "$out/.complete"
if [[ -e "$dest" ]]; then
  old="$cache_root/.apicurio-registry-$version.old.$$"
  mv -T "$dest" "$old"
  rm -rf "$old"
fi
mv -T "$out" "$dest" 2>/dev/null || { [[ -f "$marker" ]] || die "could not move the build to $dest"; }
log "ready: $jar"
echo "$jar"
