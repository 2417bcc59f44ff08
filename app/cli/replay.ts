import cliProgress from 'cli-progress';
import { replayProjection } from '../../events/replay.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { PROJECTIONS } from '../registry.ts';
import { createAppRuntime } from '../runtime.ts';

import { UsageError } from './exit.ts';

export async function replayCommand(args: readonly string[]): Promise<number> {
  const [name, ...extra] = args;
  const known = PROJECTIONS.map((p) => p.name);
  if (!name || extra.length > 0) throw new UsageError(`name one projection to replay; known: ${known.join(', ') || '(none yet)'}`);
  const projection = PROJECTIONS.find((p) => p.name === name);
  if (!projection) throw new UsageError(`unknown projection "${name}"; known: ${known.join(', ') || '(none yet)'}`);

  const config = loadConfig();
  // Progress goes to the terminal; logs stay quiet unless something is wrong.
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const runtime = await createAppRuntime(config, log);
  const bar = new cliProgress.SingleBar(
    { format: ' {phase} [{bar}] {percentage}% | {value}/{total} events | {rate}/s', hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  let barStarted = false;
  try {
    const result = await replayProjection({
      kafka: runtime.kafka,
      codec: runtime.codec,
      catalog: runtime.catalog,
      publisher: runtime.publisher,
      db: runtime.mongo.db,
      projection,
      log,
      onProgress: ({ phase, done, total }) => {
        const rate = Math.round(done / Math.max(0.001, (Date.now() - started) / 1000));
        if (!barStarted) {
          bar.start(total, done, { phase, rate });
          barStarted = true;
        } else bar.setTotal(total);
        bar.update(done, { phase, rate });
      },
    });
    bar.stop();
    process.stdout.write(
      `replayed ${projection.name}: ${result.messages} events read, ${result.applied} applied, ${result.documents} documents, ` +
        `${result.seconds.toFixed(1)}s (${Math.round(result.messages / Math.max(result.seconds, 0.001))} events/s)\n`,
    );
  } finally {
    if (barStarted) bar.stop();
    await runtime.close();
  }
  return 0;
}
