import { ROOT_CONTEXT, SpanKind, TraceFlags, trace, type SpanContext } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { expect } from 'chai';
import { HEADER } from '../../../events/codec.ts';
import { newEvent } from '../../../events/envelope.ts';
import { withProducerSpan } from '../../../events/kafka-spans.ts';
import { TRACE_HEADER, extractTraceContext, injectTraceHeaders, type HeaderSink } from '../../../events/trace-headers.ts';
import { installTracing } from '../../../services/platform/tracing/sdk.ts';
import { legacyRecord } from '../../support/legacy-records.ts';
import { probeCatalog } from '../../support/probe.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

const remote = (flags = TraceFlags.SAMPLED): SpanContext => ({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: flags, isRemote: false });
const contextOf = (sc: SpanContext) => trace.setSpanContext(ROOT_CONTEXT, sc);
const extracted = (headers: Parameters<typeof extractTraceContext>[0]) => trace.getSpanContext(extractTraceContext(headers));

describe('trace headers: W3C traceparent in Kafka records (unit)', () => {
  it('writes traceparent for the context’s span, sampled or not', () => {
    const headers: HeaderSink = {};
    injectTraceHeaders(contextOf(remote()), headers);
    expect(headers).to.deep.equal({ [TRACE_HEADER.parent]: `00-${TRACE_ID}-${SPAN_ID}-01` });
    const unsampled: HeaderSink = {};
    injectTraceHeaders(contextOf(remote(TraceFlags.NONE)), unsampled);
    expect(unsampled[TRACE_HEADER.parent]).to.equal(`00-${TRACE_ID}-${SPAN_ID}-00`);
  });

  it('reads it back from the Buffers kafkajs delivers, as a remote parent', () => {
    const headers: HeaderSink = {};
    injectTraceHeaders(contextOf(remote()), headers);
    const delivered = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(String(v))]));
    expect(extracted(delivered)).to.deep.equal({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(extracted({ [TRACE_HEADER.parent]: [Buffer.from(`00-${TRACE_ID}-${SPAN_ID}-01`)] })?.spanId).to.equal(SPAN_ID);
  });

  it('carries tracestate with it', () => {
    const headers = { [TRACE_HEADER.parent]: `00-${TRACE_ID}-${SPAN_ID}-01`, [TRACE_HEADER.state]: 'vendor=abc' };
    const context = extractTraceContext(headers);
    const out: HeaderSink = {};
    injectTraceHeaders(context, out);
    expect(out).to.deep.equal(headers);
  });

  it('gives the base context for a record without traceparent or with a malformed one', () => {
    expect(extractTraceContext(undefined)).to.equal(ROOT_CONTEXT);
    expect(extractTraceContext({ [HEADER.correlationId]: 'c-1' })).to.equal(ROOT_CONTEXT);
    for (const bad of [
      'garbage',
      `00-${'0'.repeat(32)}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
      `ff-${TRACE_ID}-${SPAN_ID}-01`,
    ]) {
      expect(extracted({ [TRACE_HEADER.parent]: bad }), bad).to.equal(undefined);
    }
  });

  it('replaces a traceparent copied from another record, and writes none without a span', () => {
    const copied: HeaderSink = {
      [TRACE_HEADER.parent]: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`,
      [TRACE_HEADER.state]: 'old=1',
      keep: 'x',
    };
    injectTraceHeaders(contextOf(remote()), copied);
    expect(copied).to.deep.equal({ keep: 'x', [TRACE_HEADER.parent]: `00-${TRACE_ID}-${SPAN_ID}-01` });
    const none: HeaderSink = { [TRACE_HEADER.parent]: 'stale', keep: 'x' };
    injectTraceHeaders(ROOT_CONTEXT, none);
    expect(none).to.deep.equal({ keep: 'x' });
  });

  describe('the producer span', () => {
    // A record's headers as the codec writes them; the body does not matter to the span.
    const catalog = probeCatalog('unit.trace');
    const encoded = () =>
      legacyRecord(catalog, newEvent('probe.recorded', { probeId: 'p-1', seq: 1, note: '' }, { correlationId: 'corr-1' }));

    it('adds nothing to the records while tracing is off', async () => {
      const message = encoded();
      const before = { ...message.headers };
      const batch = [{ topic: 'unit.trace', messages: [message] }];
      expect(await withProducerSpan(batch, async () => 'sent')).to.equal('sent');
      expect(batch[0]!.messages[0]!.headers).to.deep.equal(before);
    });

    it('puts its own span’s context beside correlation-id in every record, on copies of the headers', async () => {
      const exporter = new InMemorySpanExporter();
      const tracing = installTracing({ serviceName: 'unit', exporter, processor: 'simple' });
      try {
        const first = encoded();
        const second = encoded();
        const originalHeaders = first.headers;
        const messages: { headers?: HeaderSink }[] = [first, second];
        await withProducerSpan([{ topic: 'unit.trace', messages }], async () => undefined);
        const [span] = exporter.getFinishedSpans();
        expect(span?.kind).to.equal(SpanKind.PRODUCER);
        expect(span?.name).to.equal('send unit.trace');
        expect(span?.attributes).to.include({
          'messaging.system': 'kafka',
          'messaging.destination.name': 'unit.trace',
          'messaging.batch.message_count': 2,
        });
        const { traceId, spanId } = span!.spanContext();
        for (const m of messages) {
          expect(m.headers?.[TRACE_HEADER.parent]).to.equal(`00-${traceId}-${spanId}-01`);
          expect(m.headers?.[HEADER.correlationId]).to.equal('corr-1');
        }
        expect(originalHeaders).not.to.have.property(TRACE_HEADER.parent);
      } finally {
        await tracing.shutdown();
      }
    });

    it('marks a failed send, naming the failure by its type only', async () => {
      const exporter = new InMemorySpanExporter();
      const tracing = installTracing({ serviceName: 'unit', exporter, processor: 'simple' });
      try {
        const failure = Object.assign(new Error('duplicate key: ada@example.com'), { name: 'PublishError' });
        const sending = withProducerSpan([{ topic: 'unit.trace', messages: [encoded()] }], () => Promise.reject(failure));
        await sending.then(
          () => expect.fail('the send should fail'),
          (err: unknown) => expect(err).to.equal(failure),
        );
        const [span] = exporter.getFinishedSpans();
        expect(span?.status.code).to.equal(2);
        expect(span?.attributes['error.type']).to.equal('PublishError');
        expect(JSON.stringify([span?.attributes, span?.events, span?.status])).not.to.include('ada@example.com');
      } finally {
        await tracing.shutdown();
      }
    });
  });
});
