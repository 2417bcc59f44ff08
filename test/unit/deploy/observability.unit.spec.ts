import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import client from 'prom-client';
import { parse } from 'yaml';
// The composition root and the runtime; each service's own module (where most metrics are registered)
// is imported only when that service starts, so the spec loads every one, as the services' processes do.
import { SERVICES } from '../../../app/registry.ts';
import '../../../services/platform/runtime.ts';
import { exposedNames, metricNamesOf } from './promql-names.ts';

const ROOT = join(import.meta.dirname, '../../..');
const RULES = join(ROOT, 'deploy/prometheus/alerts.yml');
const RULE_TESTS = join(ROOT, 'deploy/prometheus/alerts.test.yml');
const DASHBOARD = join(ROOT, 'deploy/grafana/svc.json');

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function dashboardExprs(): { where: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  return panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr ?? '' })));
}

function ruleExprs(): { where: string; expr: string }[] {
  const rules = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert?: string; record?: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `rule ${r.alert ?? r.record}`, expr: r.expr })));
}

/** promtool as the install step built it (deploy/local/promtool), or the one PROMTOOL names. */
function promtool(): string {
  if (process.env.PROMTOOL) return process.env.PROMTOOL;
  const out = execFileSync('bash', [join(ROOT, 'deploy/local/promtool/provision.sh')], { encoding: 'utf8' })
    .trim()
    .split('\n');
  const path = out.at(-1);
  if (!path) throw new Error('deploy/local/promtool/provision.sh printed no path');
  return path;
}

describe('dashboard and alert rules (unit)', () => {
  it('every metric the dashboard and the alert rules name is one the services register', async () => {
    for (const service of SERVICES) await service.load();
    const registered = new Set(
      (await client.register.getMetricsAsJSON()).flatMap((m) => exposedNames({ name: m.name, type: String(m.type) })),
    );
    const used = [...dashboardExprs(), ...ruleExprs()];
    expect(used.length).to.be.greaterThan(10);
    const unknown = used.flatMap(({ where, expr }) =>
      metricNamesOf(expr)
        .filter((n) => !registered.has(n))
        .map((n) => `${where}: ${n}`),
    );
    expect(unknown).to.deep.equal([]);
    // What the issue asks to alert on is there.
    const names = new Set(used.flatMap(({ expr }) => metricNamesOf(expr)));
    for (const name of [
      'svc_key_validations_total',
      'svc_rate_limited_total',
      'svc_webhooks_total',
      'svc_emails_sent_total',
      'svc_emails_failed_total',
      'svc_dlq_depth',
      'svc_consumer_lag',
      'svc_rag_index_jobs_total',
      'svc_vision_captures_total',
    ])
      expect(names, name).to.include(name);
  });

  it('promtool accepts the alert rules and their unit tests pass', function () {
    this.timeout(600_000);
    const bin = promtool();
    const check = execFileSync(bin, ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(check).to.match(/SUCCESS: \d+ rules found/);
    const tests = execFileSync(bin, ['test', 'rules', RULE_TESTS], { encoding: 'utf8', cwd: join(ROOT, 'deploy/prometheus') });
    expect(tests).to.include('SUCCESS');
  });
});

describe('metricNamesOf (unit)', () => {
  it('finds the metrics of an expression, not its functions, labels, keywords, durations or variables', () => {
    expect(
      metricNamesOf(
        'histogram_quantile(0.99, sum by (le) (rate(svc_a_bucket{route="/x", status=~"5.."}[$__rate_interval]))) > 0.025 and on (group) deriv(svc_b[10m] offset 1h) > 1e3',
      ),
    ).to.deep.equal(['svc_a_bucket', 'svc_b']);
    expect(metricNamesOf('sum(rate(x_total[5m])) by (service) / ignoring(code) up')).to.deep.equal(['x_total', 'up']);
  });

  it('names a histogram by its series', () => {
    expect(exposedNames({ name: 'h', type: 'histogram' })).to.deep.equal(['h', 'h_bucket', 'h_sum', 'h_count']);
    expect(exposedNames({ name: 'c_total', type: 'counter' })).to.deep.equal(['c_total']);
  });
});
