import { readFileSync } from 'node:fs';
import { AvroSchemaParser } from '@asyncapi/avro-schema-parser';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { expect } from 'chai';
import { parse, stringify } from 'yaml';
import { ASYNCAPI_FILE, renderAsyncApi } from '../../../app/asyncapi.ts';
import { eventCatalog } from '../../../app/runtime.ts';
import { defineEvent } from '../../../events/catalog.ts';
import { keyFields } from '../../../events/asyncapi.ts';
import { subjectOf } from '../../../events/schema-registry.ts';

interface Diagnostic {
  severity: DiagnosticSeverity;
  code: string | number;
  message: string;
  path: (string | number)[];
}

async function diagnosticsOf(text: string): Promise<Diagnostic[]> {
  const parser = new Parser();
  parser.registerSchemaParser(AvroSchemaParser());
  return (await parser.parse(text)).diagnostics as Diagnostic[];
}

const shown = (ds: readonly Diagnostic[]) => ds.map((d) => `${d.code} at ${d.path.join('.')}: ${d.message}`).join('\n');

describe('AsyncAPI document of the topics (unit)', () => {
  const committed = readFileSync(ASYNCAPI_FILE, 'utf8');

  it('docs/asyncapi.yaml is what the catalog and schemas give now (else: npm run asyncapi)', () => {
    expect(committed === renderAsyncApi(), 'docs/asyncapi.yaml is stale: run `npm run asyncapi` and commit it').to.equal(true);
  });

  it('passes the AsyncAPI parser (with the Avro schema parser) with no error or warning', async function () {
    this.timeout(60_000);
    const problems = (await diagnosticsOf(committed)).filter((d) => d.severity <= DiagnosticSeverity.Warning);
    expect(problems, shown(problems)).to.deep.equal([]);
  });

  it('the parser rejects a document whose Avro schema is broken (the check can fail)', async function () {
    this.timeout(60_000);
    const doc = parse(committed) as { components: { schemas: Record<string, { schema: { fields: { type: unknown }[] } }> } };
    const first = Object.values(doc.components.schemas)[0];
    if (!first) throw new Error('no schema in the document');
    first.schema.fields[0]!.type = 'not-an-avro-type';
    const errors = (await diagnosticsOf(stringify(doc))).filter((d) => d.severity === DiagnosticSeverity.Error);
    expect(errors).to.not.deep.equal([]);
  });

  it('holds every topic and its DLQ, every type at every version with its registry subject, its pre-registry fingerprint and key', () => {
    const catalog = eventCatalog();
    const doc = parse(committed) as {
      channels: Record<string, { address: string; messages: Record<string, unknown> }>;
      components: {
        messages: Record<
          string,
          {
            headers: { properties: Record<string, { const?: string }>; required: string[] };
            bindings: { kafka: { key: object; schemaIdLocation: string } };
            'x-registry-subject': string;
          }
        >;
      };
    };
    const addresses = Object.values(doc.channels).map((c) => c.address);
    for (const topic of catalog.topics()) expect(addresses).to.include.members([`{topicPrefix}${topic}`, `{topicPrefix}${topic}.dlq`]);
    expect(addresses).to.have.length(catalog.topics().length * 2);
    for (const type of catalog.types()) {
      for (const version of catalog.versions(type)) {
        const message = doc.components.messages[`${type}.v${version.version}`];
        expect(message, `${type} v${version.version}`).to.not.equal(undefined);
        expect(message?.headers.properties['schema-fingerprint']?.const).to.equal(version.fingerprint);
        expect(message?.headers.required).not.to.include('schema-fingerprint');
        expect(message?.['x-registry-subject']).to.equal(`{topicPrefix}${subjectOf(catalog.topicOf(type), version)}`);
        expect(message?.bindings.kafka.schemaIdLocation).to.equal('payload');
        expect(message?.headers.properties['event-type']?.const).to.equal(type);
        expect(message?.bindings.kafka.key).to.have.property('x-key-fields');
      }
    }
  });
});

describe('keyFields (unit)', () => {
  const fields = ['subscriptionId', 'webhookId', 'body'];
  const keyed = (key: (d: Record<string, string | null>) => string) =>
    defineEvent<{ type: 't'; data: Record<string, string | null>; metadata: never }>({ type: 't', topic: 't', schema: 'x/t', key });

  it('reads one field, or a ?? chain in its order', () => {
    expect(
      keyFields(
        keyed((d) => d.webhookId as string),
        fields,
      ),
    ).to.deep.equal(['webhookId']);
    expect(
      keyFields(
        keyed((d) => (d.subscriptionId ?? d.webhookId) as string),
        fields,
      ),
    ).to.deep.equal(['subscriptionId', 'webhookId']);
  });

  it('refuses a key built from fields, a constant, or a field the schema lacks', () => {
    expect(() =>
      keyFields(
        keyed((d) => `${d.subscriptionId}:${d.webhookId}`),
        fields,
      ),
    ).to.throw(/not a data field/);
    expect(() =>
      keyFields(
        keyed(() => 'all'),
        fields,
      ),
    ).to.throw(/not a data field/);
    expect(() =>
      keyFields(
        keyed((d) => d.missing as string),
        fields,
      ),
    ).to.throw(/reads no data field/);
  });
});
