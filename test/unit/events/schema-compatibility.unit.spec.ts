import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type CompatibilityMode, historyProblems, loadPolicy, modeOf, schemaHistories } from '../../../events/schema-compatibility.ts';

/**
 * The first of the two compatibility checks (the registry's mode per subject is the second): every
 * schema history under schemas/, found generically (a new context's folder is checked without
 * being listed anywhere), keeps the mode schemas/compatibility.json gives it, judged by avsc's
 * resolver, the one the codec reads with. No registry needed.
 */
describe('schema compatibility (unit)', () => {
  const policy = loadPolicy();
  const histories = schemaHistories();

  it('finds every schema history under schemas/', () => {
    expect(histories.size).to.be.greaterThan(40);
    expect(histories.get('keys/key.generated')?.length).to.equal(4);
  });

  for (const [schema, files] of histories) {
    const { mode } = modeOf(policy, schema);
    it(`${schema}: every version keeps ${mode}`, () => {
      const problems = historyProblems(files, mode);
      expect(problems, `${schema} breaks ${mode}:\n  ${problems.join('\n  ')}`).to.deep.equal([]);
    });
  }

  it('gives a reason for every mode, and names only schemas that exist', () => {
    expect(policy.default.reason.length).to.be.greaterThan(20);
    for (const [schema, choice] of Object.entries(policy.subjects)) {
      expect(histories.has(schema), `compatibility.json names "${schema}", which has no files`).to.equal(true);
      expect(choice.reason.length, schema).to.be.greaterThan(20);
      expect(['BACKWARD_TRANSITIVE', 'FULL_TRANSITIVE']).to.include(choice.mode);
    }
  });

  describe('a change that breaks a mode fails, naming the field', () => {
    let dir: string;
    const envelope = [
      { name: 'eventId', type: 'string' },
      { name: 'occurredAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
      { name: 'correlationId', type: 'string' },
      { name: 'causationId', type: ['null', 'string'], default: null },
    ];
    const write = (name: string, fields: unknown[]): string => {
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify({ type: 'record', name: 'Thing', namespace: 'svc.test', fields: [...envelope, ...fields] }));
      return file;
    };
    const problems = (older: unknown[], newer: unknown[], mode: CompatibilityMode) =>
      historyProblems([write('thing.v1.avsc', older), write('thing.v2.avsc', newer)], mode);
    const color = (symbols: string[], withDefault: boolean) => ({
      name: 'color',
      type: { type: 'enum', name: 'Color', symbols, ...(withDefault ? { default: symbols[0] } : {}) },
    });

    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'svc-compat-'));
      mkdirSync(dir, { recursive: true });
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('a field added without a default breaks backward compatibility', () => {
      const found = problems(
        [{ name: 'a', type: 'string' }],
        [
          { name: 'a', type: 'string' },
          { name: 'size', type: 'int' },
        ],
        'BACKWARD_TRANSITIVE',
      );
      expect(found.join('\n')).to.match(/v2 cannot read v1: field "size" is not in the writer's schema and has no default/);
    });

    it('a field whose type changes incompatibly is named', () => {
      const found = problems([{ name: 'count', type: 'string' }], [{ name: 'count', type: 'int' }], 'BACKWARD_TRANSITIVE');
      expect(found.join('\n')).to.match(/field "count"/);
    });

    it('a field removed without a default breaks forward compatibility (old readers need it)', () => {
      const found = problems(
        [
          { name: 'a', type: 'string' },
          { name: 'gone', type: 'string' },
        ],
        [{ name: 'a', type: 'string' }],
        'FULL_TRANSITIVE',
      );
      expect(found).to.deep.equal(['v1 cannot read v2: field "gone" is not in the writer\'s schema and has no default']);
      expect(
        problems(
          [
            { name: 'a', type: 'string' },
            { name: 'gone', type: 'string' },
          ],
          [{ name: 'a', type: 'string' }],
          'BACKWARD_TRANSITIVE',
        ),
      ).to.deep.equal([]);
    });

    it('an enum symbol added breaks forward compatibility unless the older enum has a default', () => {
      const found = problems([color(['RED'], false)], [color(['RED', 'BLUE'], false)], 'FULL_TRANSITIVE');
      expect(found.join('\n')).to.match(/v1 cannot read v2: field "color": enum svc.test.Color lacks BLUE/);
      expect(problems([color(['RED'], true)], [color(['RED', 'BLUE'], true)], 'FULL_TRANSITIVE')).to.deep.equal([]);
    });

    it('checks every older version, not only the previous one (transitive)', () => {
      const files = [
        write('t.v1.avsc', [{ name: 'a', type: 'string' }]),
        write('t.v2.avsc', [
          { name: 'a', type: 'string' },
          { name: 'b', type: 'int', default: 0 },
        ]),
        write('t.v3.avsc', [{ name: 'b', type: 'int', default: 0 }]),
      ];
      const found = historyProblems(files, 'FULL_TRANSITIVE');
      expect(found).to.include('v1 cannot read v3: field "a" is not in the writer\'s schema and has no default');
      expect(found).to.include('v2 cannot read v3: field "a" is not in the writer\'s schema and has no default');
    });
  });
});
