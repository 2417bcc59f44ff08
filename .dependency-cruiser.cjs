/**
 * The layering rule of the house (docs/architecture.md), checked by `npm run deps` inside `npm test`.
 *
 *   app/ (composition root: registry of contexts, the svc CLI)
 *     -> services/<context>/, the faces (services/vision-rag/) and their plumbing (services/premium/)
 *       -> services/platform/, services/kernel/, events/
 *
 * Arrows only run down. test/unit/deps/dependency-rule.unit.spec.ts runs these rules on a fixture
 * with a deliberate violation of each, so a rule that stops firing fails the tests.
 */

/** Folders under services/ that are not a bounded context: the kernel every context stands on. */
const BELOW_CONTEXTS = '^services/(platform|kernel)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: the modules in it can only be understood, loaded and changed together.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-imports-no-context',
      severity: 'error',
      comment:
        'services/platform, services/kernel and events/ sit below every context: they are told what the contexts are ' +
        '(by app/), they never import one.',
      from: { path: '^(services/platform|services/kernel|events)/' },
      to: { path: '^services/', pathNot: BELOW_CONTEXTS },
    },
    {
      name: 'events-imports-no-service',
      severity: 'error',
      comment: 'events/ is the backbone under the services: it imports nothing of theirs.',
      from: { path: '^events/' },
      to: { path: '^services/' },
    },
    {
      name: 'nothing-imports-app',
      severity: 'error',
      comment: 'app/ is the composition root: it imports everything, nothing in production code imports it.',
      from: { path: '^(services|events|deploy|schemas)/' },
      to: { path: '^app/' },
    },
    {
      name: 'context-loads-its-services-lazily',
      severity: 'error',
      comment:
        "A context declares its services with lazyService and imports their code only when one starts: the registry " +
        "imports every context, so a static import here puts that service's code in every process's heap.",
      from: { path: '^services/[^/]+/context[.]ts$' },
      to: { path: '[.]service[.]ts$', dependencyTypesNot: ['dynamic-import'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Breaks every rule on purpose; its test cruises it on its own (with this folder as baseDir).
    exclude: { path: '^test/fixtures/dependency-rule/' },
    // Type-only imports count: a cycle through types still ties the modules together.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
