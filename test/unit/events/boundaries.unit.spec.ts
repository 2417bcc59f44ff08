import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const EVENTS = join(ROOT, 'events');

const sources = readdirSync(EVENTS, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: join(EVENTS, f), text: readFileSync(join(EVENTS, f), 'utf8') }));

/** Every module specifier a file imports, statically or dynamically. */
const specifiers = (text: string): string[] => [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);

/**
 * events/ is the platform's core: the catalog, codec, consumer, projection runner, replay, outbox.
 * It knows no business word and imports nothing from services/, so every bounded context can use
 * it and none can leak into it.
 */
describe('events/ is a business-free core (unit)', () => {
  it('has source files to check', () => {
    expect(sources.length).to.be.greaterThan(10);
  });

  it('imports nothing from services/ (or anything else outside events/ but packages and node:)', () => {
    const offending: string[] = [];
    for (const { file, text } of sources) {
      for (const spec of specifiers(text)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(ROOT, resolve(dirname(file), spec));
        if (!target.startsWith('events/') && target !== 'schemas') offending.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
    expect(offending).to.deep.equal([]);
  });

  it('knows no business word', () => {
    const words = /\b(subscriptions?|accounts?|billing|webhooks?|mailer|e-?mails?|api keys?|tiers?|invoices?|quotas?|users?)\b/i;
    const found = sources.flatMap(({ file, text }) =>
      text.split('\n').flatMap((line, i) => (words.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).to.deep.equal([]);
  });
});
