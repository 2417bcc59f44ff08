/**
 * Runs a benchmark's main: a failure is printed with its stack and exits 1. The process exits when
 * main is done, because kafkajs can leave timers behind after disconnecting.
 */
export async function runMain(main: () => Promise<void>, err: (line: string) => void): Promise<void> {
  try {
    await main();
  } catch (e) {
    err(`FAILED: ${e instanceof Error ? e.message : String(e)}`);
    if (e instanceof Error && e.stack) err(e.stack);
    process.exitCode = 1;
  }
  process.exit();
}

/**
 * On SIGINT or SIGTERM: says so, runs `cleanup` (stops what the bench started) and exits 130.
 * Returns the call that removes the handlers, for the bench's own `finally`.
 */
export function stopOnSignals(cleanup: () => Promise<void>, err: (line: string) => void): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    err(`${signal}: stopping`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
