#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError } from '../config.ts';
import { runCommand } from './run.ts';
import { replayCommand } from './replay.ts';
import { topicsCommand } from './topics.ts';
import { UsageError, EXIT } from './exit.ts';

const HELP = `svc: run the platform and operate it

usage:
  svc start                     local stack (unless KAFKA_BROKERS/MONGODB_URI/SMTP_URL name servers) + every service
  svc run <service...|all>      run services against the configured Kafka, MongoDB and SMTP
  svc stack                     start only the local stack and print its environment
  svc topics                    create missing event topics and their dead-letter topics
  svc replay <projection>       rebuild a projection from the log and swap it in
  svc help                      this text

options:
  --data-dir <dir>              where the local stack keeps its data (default .data/dev)
`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command, ...rest] = positionals;
  const dataDir = values['data-dir'] ?? '.data/dev';
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined && !values.help ? EXIT.usage : EXIT.ok;
  }
  switch (command) {
    // The local stack is development tooling: loaded only when asked for, so images need not ship it.
    case 'start':
      return (await import('./start.ts')).startCommand(dataDir);
    case 'stack':
      return (await import('./start.ts')).stackCommand(dataDir);
    case 'run':
      return runCommand(rest);
    case 'topics':
      return topicsCommand();
    case 'replay':
      return replayCommand(rest);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
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
    } else {
      process.stderr.write(`svc: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = EXIT.failure;
    }
  },
);
