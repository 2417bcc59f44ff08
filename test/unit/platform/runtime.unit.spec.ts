import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { expect } from 'chai';

// Packages that ship prebuilt addons for every platform (onnxruntime-node: bin/napi-v6/<platform>/<arch>/)
// hold some that no Node here could load; only this platform's and arch's are checked.
const PLATFORMS = ['darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'sunos', 'aix', 'android'];
const ARCHES = ['x64', 'arm64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64'];
function forThisMachine(path: string): boolean {
  const parts = path.split(sep);
  return !parts.some((p) => (PLATFORMS.includes(p) && p !== process.platform) || (ARCHES.includes(p) && p !== process.arch));
}

function nativeAddons(dir: string, found: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) nativeAddons(path, found);
    else if (name.endsWith('.node') && forThisMachine(path)) found.push(path);
  }
  return found;
}

describe('runtime (unit)', () => {
  it('runs on Node 24 LTS', () => {
    expect(Number(process.versions.node.split('.')[0])).to.equal(24);
  });

  it('loads every native addon in node_modules under this Node (the machine builds them against older headers)', () => {
    const require = createRequire(import.meta.url);
    const addons = nativeAddons('node_modules');
    expect(addons.some((a) => a.includes(`onnxruntime-node${sep}bin`))).to.equal(true);
    for (const addon of addons) expect(() => require(join(process.cwd(), addon)), addon).not.to.throw();
  });
});
