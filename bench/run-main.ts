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
