import type { Express } from 'express';
import type { KeyGate } from '../../keys/gate.ts';
import { API_PATHS } from '../../premium/api-paths.ts';
import { admitter, callerOf, parse } from '../../premium/gated-request.ts';
import type { IntegrationDeps } from '../app/deps.ts';
import { generateTests } from '../app/generate-tests.ts';
import { projectReport } from '../app/project-report.ts';
import { validateComponent } from '../app/validate-component.ts';
import { generateInput, reportInput, validateInput } from '../input.ts';

/**
 * The integration operations over HTTP, behind the same gate as retrieval and vision (401, 403, 403
 * subscription required, 429). Validate and generate use `queries` (and `screenshotsAnalyzed` for a
 * page) themselves; a report reads one's own figures and uses none.
 */
export function mountIntegrationRoutes(app: Express, deps: IntegrationDeps, gate: KeyGate): void {
  const admit = admitter(gate);

  app.post(API_PATHS.integration.validate, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await validateComponent(deps, callerOf(admitted), parse(validateInput, req.body), req.id));
  });

  app.post(API_PATHS.integration.generate, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await generateTests(deps, callerOf(admitted), parse(generateInput, req.body), req.id));
  });

  app.post(API_PATHS.integration.report, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    const report = await projectReport(deps.rag, callerOf(admitted), parse(reportInput, req.body));
    if (report.format === 'json') res.json(report.body);
    // A report is the customer's own: never in a shared cache; the html carries its own CSP too.
    else
      res
        .set({ 'Content-Type': report.contentType, 'Cache-Control': 'private, no-store', 'X-Content-Type-Options': 'nosniff' })
        .send(report.body);
  });
}
