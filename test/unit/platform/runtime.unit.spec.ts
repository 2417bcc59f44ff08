import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'chai';

function nativeAddons(dir: string, found: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) nativeAddons(path, found);
    else if (name.endsWith('.node')) found.push(path);
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
    for (const addon of addons) expect(() => require(join(process.cwd(), addon)), addon).not.to.throw();
  });
});
