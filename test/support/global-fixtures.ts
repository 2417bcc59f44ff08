import { stopStack } from './stack.ts';
import { runStackChoice } from './stack-choice.ts';

/** Time the stack's stop and the last handles get to close before the run is called hung. */
const EXIT_GRACE_MS = 120_000;

/** The run's first line says which stack it uses; an unknown SVC_STACK fails it here, before any test. */
export async function mochaGlobalSetup(): Promise<void> {
  await runStackChoice();
}

export async function mochaGlobalTeardown(): Promise<void> {
  // mocha runs without --exit so that a handle a test leaves open shows; without this watchdog that
  // handle would keep the run alive until CI's own limit, with no word of what it was.
  setTimeout(() => {
    const open = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap');
    process.stderr.write(
      `\nmocha finished, but the process was still alive ${EXIT_GRACE_MS / 1000} s later; open: ${open.join(', ')}\n` +
        'a test left these running: failing the run instead of hanging it\n',
    );
    // mocha's own 'exit' listener writes the failure count into the exit code (0 when every test
    // passed); this one runs after it, so the run fails.
    process.on('exit', () => {
      process.exitCode = 1;
    });
    process.exit(1);
  }, EXIT_GRACE_MS).unref();
  await stopStack();
}
