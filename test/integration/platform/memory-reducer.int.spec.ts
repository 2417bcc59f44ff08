import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { BENCH_NODE_FLAGS } from '../../../bench/node-flags.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const IMAGE_FILES = ['deploy/podman/Containerfile', 'deploy/Dockerfile'];

/** The node flags of an image's ENTRYPOINT: what comes between the node binary and svc's CLI. */
function entrypointFlags(file: string): string[] {
  const line = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(join(ROOT, file), 'utf8'))?.[1];
  if (!line) throw new Error(`${file}: no ENTRYPOINT in exec form`);
  const argv = JSON.parse(line) as string[];
  expect(argv[0], `${file}: the image's own Node`).to.equal('/usr/local/bin/node');
  expect(argv.at(-1), `${file}: svc's CLI last`).to.equal('app/cli/svc.ts');
  return argv.slice(1, -1);
}

/**
 * A child Node with `flags` that builds a heap, runs a full collection (which arms V8's memory reducer,
 * when there is one) and stays up for `aliveMs`; returns the memory reducer's own trace lines.
 */
async function reducerTrace(flags: readonly string[], aliveMs: number): Promise<string[]> {
  const script =
    "const live = []; for (let i = 0; i < 300000; i++) live.push({ i }); globalThis.gc({ type: 'major', execution: 'sync' }); " +
    `setTimeout(() => void live, ${aliveMs});`;
  const { stdout } = await promisify(execFile)(process.execPath, [
    ...flags,
    '--expose-gc',
    '--trace-memory-reducer',
    // Its first look at the heap 0.1 s after the collection instead of 8 s: the same decision, sooner.
    '--gc-memory-reducer-start-delay-ms=100',
    '-e',
    script,
  ]);
  return stdout.split('\n').filter((l) => l.includes('Memory reducer:'));
}

describe("the image's Node flags: V8's memory reducer off where services run (integration, child processes)", () => {
  it('both images start svc with the same flags, the memory reducer off among them', () => {
    const [podman, docker] = IMAGE_FILES.map(entrypointFlags);
    expect(docker, 'deploy/Dockerfile against deploy/podman/Containerfile').to.deep.equal(podman);
    expect(podman).to.include('--no-memory-reducer');
  });

  it('the benchmarks that `npm run bench` runs start with the same flags, so they measure what pods run', () => {
    const image = entrypointFlags(IMAGE_FILES[0]!);
    expect([...BENCH_NODE_FLAGS], 'bench/node-flags.ts').to.deep.equal(image);
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const name of ['bench', 'bench:validate', 'bench:key-check', 'bench:events', 'bench:webhook', 'bench:replay']) {
      const words = scripts[name]?.split(' ') ?? [];
      expect(words.slice(0, -1), name).to.deep.equal(['node', ...image]);
      expect(words.at(-1), name).to.match(/^bench\/[a-z-]+\.ts$/);
    }
  });

  it("V8 under the image's flags arms no memory reducer after a full collection, where V8's defaults do", async function () {
    this.timeout(20_000);
    const image = entrypointFlags(IMAGE_FILES[0]!);
    // The same probe, side by side: the defaults' trace shows the reducer's first look at the heap within
    // the window (measured: 0.26-0.29 s after start), so the window was long enough for the image's too.
    const [defaults, imageFlags] = await Promise.all([reducerTrace([], 3000), reducerTrace(image, 3000)]);
    expect(defaults, "V8's defaults").to.not.be.empty;
    expect(imageFlags, "the image's flags").to.deep.equal([]);
  });
});
