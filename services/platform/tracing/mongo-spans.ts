import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, MongoClient } from 'mongodb';
import { activeTracer, errorType } from '../../../events/tracer.ts';

/**
 * A client span per MongoDB command, from the driver's own command monitoring (no patching of the
 * driver). Only for commands run inside a span (a request, a record being handled): the periodic
 * sweeps, health pings and connection handshakes would otherwise each start a trace of their own.
 * The span names the command and its collection, never the command's filter, documents or reply.
 */
export function traceCommands(client: MongoClient): void {
  const open = new Map<number, Span>();
  client.on('commandStarted', (e: CommandStartedEvent) => {
    const tracer = activeTracer();
    const parent = context.active();
    if (!tracer || trace.getSpan(parent) === undefined) return;
    const collection = collectionOf(e);
    const [host, port] = hostAndPort(e.address);
    const span = tracer.startSpan(
      collection ? `${e.commandName} ${collection}` : e.commandName,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_DB_SYSTEM_NAME]: 'mongodb',
          [ATTR_DB_OPERATION_NAME]: e.commandName,
          [ATTR_DB_NAMESPACE]: e.databaseName,
          ...(collection ? { [ATTR_DB_COLLECTION_NAME]: collection } : {}),
          ...(host ? { [ATTR_SERVER_ADDRESS]: host } : {}),
          ...(port ? { [ATTR_SERVER_PORT]: port } : {}),
        },
      },
      parent,
    );
    open.set(e.requestId, span);
  });
  client.on('commandSucceeded', (e: CommandSucceededEvent) => {
    open.get(e.requestId)?.end();
    open.delete(e.requestId);
  });
  client.on('commandFailed', (e: CommandFailedEvent) => {
    const span = open.get(e.requestId);
    if (!span) return;
    open.delete(e.requestId);
    span.setAttribute(ATTR_ERROR_TYPE, errorType(e.failure));
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}

/** The collection a command names as its first field's value (find, insert, update, aggregate, ...). */
function collectionOf(e: CommandStartedEvent): string | undefined {
  const value: unknown = e.command[e.commandName];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function hostAndPort(address: string): [string | undefined, number | undefined] {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  return m ? [m[1], Number(m[2])] : [address || undefined, undefined];
}
