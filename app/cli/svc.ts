#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { errorMessage, isTransient } from '../../events/errors.ts';
import { ConfigError } from '../../services/platform/config.ts';
import { runCommand } from './run.ts';
import { replayCommand } from './replay.ts';
import { repartitionCommand, topicsCommand } from './topics.ts';
import { UsageError, EXIT } from './exit.ts';

const HELP = `svc: run the platform and operate it

usage:
  svc start                     local stack (unless KAFKA_BROKERS/MONGODB_URI/SMTP_URL name servers) + every service
  svc run <service...|all>      run services against the configured Kafka, MongoDB and SMTP
  svc stack                     start only the local stack and print its environment
  svc topics                    create missing event topics and their dead-letter topics
  svc topics tail <topic>       print a topic's records decoded through the schema registry (--from beginning|end|<offset>|<ISO time>, --limit N, --json)
  svc schemas register          the deploy step: register every event schema version, with its subject's compatibility mode
  svc schemas check             check every schema history under schemas/ against its compatibility mode (no registry needed)
  svc topics repartition --to-prefix <p> --partitions <n>
                                copy the topics (services stopped) to <p> with <n> partitions, per-key order kept
  svc replay <projection>       rebuild a projection from the log and swap it in
  svc dlq list                  dead-letter topics: how many messages, how many not re-driven yet
  svc dlq show <topic>          the newest dead letters: why they failed and where from (--limit N, --payload)
  svc dlq redrive <topic>       send dead letters back to the consumer group that failed them, once
  svc rag index <collection> <path>     index a folder (inside RAG_ROOTS) into a collection, with a progress bar
  svc rag query <collection> "<text>"   search a collection (--top-k N)
  svc rag reindex <collection>          rebuild a collection's index from its sources
  svc vision capture <url>      capture a page (stored like the service's; PNG to --out, --full-page)
  svc vision test <suite.json>  run a visual test suite ({url, testSuite}); exit 1 when a check fails
  svc billing reconcile         ask the provider for the store's subscriptions; record what the webhooks missed
  svc mcp --stdio               the MCP tools over stdio for a local assistant (key in SVC_API_KEY; needs the MCP server)
  svc help                      this text

options:
  --data-dir <dir>              where the local stack keeps its data (default .data/dev)
  --stack-ports <dev|auto>      the local servers' ports: the development ones (default) or free ones
`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      'stack-ports': { type: 'string' },
      limit: { type: 'string' },
      payload: { type: 'boolean' },
      customer: { type: 'string' },
      'top-k': { type: 'string' },
      stdio: { type: 'boolean' },
      out: { type: 'string' },
      'full-page': { type: 'boolean' },
      from: { type: 'string' },
      json: { type: 'boolean' },
      'to-prefix': { type: 'string' },
      partitions: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const stackPorts = values['stack-ports'] ?? 'dev';
  if (stackPorts !== 'dev' && stackPorts !== 'auto') throw new UsageError('--stack-ports takes dev or auto');
  const [command, ...rest] = positionals;
  const dataDir = values['data-dir'] ?? '.data/dev';
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined && !values.help ? EXIT.usage : EXIT.ok;
  }
  switch (command) {
    // The local stack is development tooling: loaded only when asked for, so images need not ship it.
    case 'start':
      return (await import('./start.ts')).startCommand({ dataDir, stackPorts });
    case 'stack':
      return (await import('./start.ts')).stackCommand({ dataDir, stackPorts });
    case 'run':
      return runCommand(rest);
    case 'topics':
      if (rest[0] === 'repartition')
        return repartitionCommand({
          ...(values['to-prefix'] !== undefined ? { toPrefix: values['to-prefix'] } : {}),
          ...(values.partitions !== undefined ? { partitions: values.partitions } : {}),
        });
      return topicsCommand(rest, {
        ...(values.from !== undefined ? { from: values.from } : {}),
        ...(values.limit !== undefined ? { limit: values.limit } : {}),
        ...(values.json ? { json: true } : {}),
      });
    case 'schemas':
      return (await import('./schemas.ts')).schemasCommand(rest);
    case 'replay':
      return replayCommand(rest);
    case 'rag':
      return (await import('./rag.ts')).ragCommand(rest, {
        ...(values.customer !== undefined ? { customer: values.customer } : {}),
        ...(values['top-k'] !== undefined ? { topK: values['top-k'] } : {}),
      });
    case 'vision':
      return (await import('./vision.ts')).visionCommand(rest, {
        ...(values.customer !== undefined ? { customer: values.customer } : {}),
        ...(values.out !== undefined ? { out: values.out } : {}),
        ...(values['full-page'] ? { fullPage: true } : {}),
      });
    case 'mcp':
      return (await import('./mcp.ts')).mcpCommand(rest, { stdio: values.stdio === true });
    case 'billing':
      return (await import('./billing.ts')).billingCommand(rest);
    case 'dlq':
      return (await import('./dlq.ts')).dlqCommand(rest, {
        ...(values.limit !== undefined ? { limit: values.limit } : {}),
        ...(values.payload ? { payload: true } : {}),
      });
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

// Exit explicitly: a client of a server that is gone (Kafka's retry timers, say) must not keep a
// finished command alive.
main(process.argv.slice(2)).then(
  (code) => {
    process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`svc: ${err.message}\n\n${HELP}`);
      process.exitCode = EXIT.usage;
    } else if (err instanceof ConfigError) {
      process.stderr.write(`svc: ${err.message}\n`);
      process.exitCode = EXIT.config;
    } else if ((err as { code?: string } | null)?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`svc: ${(err as Error).message}\n\n${HELP}`);
      process.exitCode = EXIT.usage;
    } else if ((err as Error | null)?.name === 'RepartitionRefused') {
      process.stderr.write(`svc: ${(err as Error).message}\n`);
      process.exitCode = EXIT.unavailable;
    } else if ((err as Error | null)?.name === 'IndexHeldError') {
      process.stderr.write(`svc: ${(err as Error).message}\n`);
      process.exitCode = EXIT.unavailable;
    } else if ((err as Error | null)?.name === 'KafkaJSSASLAuthenticationError') {
      // A configuration mistake, not an outage: retrying with the same credentials cannot help.
      process.stderr.write(
        `svc: Kafka refused the credentials (check KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD): ${(err as Error).message}\n`,
      );
      process.exitCode = EXIT.config;
    } else if (isTransient(err)) {
      process.stderr.write(
        `svc: a server it needs is unreachable (is the stack running? are KAFKA_BROKERS / MONGODB_URI / SCHEMA_REGISTRY_URL right?): ${errorMessage(err)}\n`,
      );
      process.exitCode = EXIT.unavailable;
    } else {
      process.stderr.write(`svc: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = EXIT.failure;
    }
    process.exit();
  },
);
