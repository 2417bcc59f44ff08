import { resolve } from 'node:path';
import { expect } from 'chai';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/** A small house laid out like the repository's, which breaks each rule once and keeps it otherwise. */
const FIXTURE = resolve('test/fixtures/dependency-rule');

/** The project's own rules (.dependency-cruiser.cjs), run on the fixture as `npm run deps` runs them on the tree. */
async function cruiseFixture(): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(resolve('.dependency-cruiser.cjs'));
  const reported = await cruise(['.'], { ...options, baseDir: FIXTURE }, undefined, {
    tsConfig: extractTSConfig(resolve('tsconfig.json')),
  });
  if (typeof reported.output === 'string') throw new TypeError('cruise answered a report, not a result');
  return reported.output;
}

describe('the dependency rule (unit)', function () {
  // Loading the TypeScript parser takes a second or two on a busy machine.
  this.timeout(30_000);
  let result: ICruiseResult;
  const found = (rule: string) => result.summary.violations.filter((v) => v.rule.name === rule).map((v) => `${v.from} -> ${v.to}`);

  before(async () => {
    result = await cruiseFixture();
  });

  it('resolves imports written with .ts extensions (Node type stripping), so no arrow goes unseen', () => {
    const unresolved = result.modules.flatMap((m) =>
      m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source}: ${d.module}`),
    );
    expect(unresolved).to.deep.equal([]);
    expect(result.modules.find((m) => m.source === 'services/platform/config.ts')?.dependencies.map((d) => d.resolved)).to.have.members([
      'services/billing/plan.ts',
      'services/kernel/tiers.ts',
    ]);
  });

  it('reports an import cycle', () => {
    const cycles = result.summary.violations
      .filter((v) => v.rule.name === 'no-circular')
      .map((v) => [v.from, ...(v.cycle ?? []).map((c) => c.name)]);
    expect(cycles).to.have.length(1);
    expect(cycles[0]).to.include.members(['services/rag/engine.ts', 'services/rag/index-store.ts']);
  });

  it('reports platform and events importing a context, and events importing any service', () => {
    expect(found('kernel-imports-no-context')).to.have.members([
      'services/platform/config.ts -> services/billing/plan.ts',
      'events/bus.ts -> services/rag/index-store.ts',
    ]);
    expect(found('events-imports-no-service')).to.deep.equal(['events/bus.ts -> services/rag/index-store.ts']);
  });

  it('reports production code importing the composition root', () => {
    expect(found('nothing-imports-app')).to.deep.equal(['services/billing/uses-app.ts -> app/registry.ts']);
  });

  it("reports a context importing its service's code statically, and lets it import it when the service starts", () => {
    expect(found('context-loads-its-services-lazily')).to.deep.equal([
      'services/billing/context.ts -> services/billing/billing.service.ts',
    ]);
  });

  it('lets every layer import the kernel and the composition root import everything', () => {
    const allowed = ['services/billing/plan.ts', 'services/kernel/tiers.ts', 'app/registry.ts'];
    expect(result.summary.violations.filter((v) => allowed.includes(v.from) && !v.cycle)).to.deep.equal([]);
    expect(result.summary.error).to.equal(result.summary.violations.length);
  });
});
