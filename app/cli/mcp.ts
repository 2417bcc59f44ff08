import { errorMessage, isTransient } from '../../events/errors.ts';
import { checkKey, KeyRefusedError, loadBridgeConfig, runStdioBridge } from '../../services/mcp/stdio-bridge.ts';
import { EXIT, UsageError } from './exit.ts';

/** Exit code of a key that cannot run the tools (sysexits' EX_NOPERM). */
const EXIT_KEY_REFUSED = 77;

/**
 * `svc mcp --stdio`. Everything it says goes to stderr: stdout carries the protocol. Exit codes:
 * 64 usage, 78 configuration (SVC_API_KEY missing or malformed), 77 key refused, 69 the key service
 * or the MCP server unreachable, 0 once the assistant closes stdin.
 */
export async function mcpCommand(args: readonly string[], options: { stdio: boolean }): Promise<number> {
  if (args.length > 0 || !options.stdio)
    throw new UsageError('svc mcp takes --stdio (the HTTP server runs with `svc start` or `svc run mcp`)');
  const config = loadBridgeConfig(process.env);
  try {
    await checkKey(config);
  } catch (err) {
    if (err instanceof KeyRefusedError) {
      process.stderr.write(`svc mcp: ${err.message}\n`);
      return EXIT_KEY_REFUSED;
    }
    if (isTransient(err)) {
      process.stderr.write(
        `svc mcp: the key-validation service at ${config.authUrl} is unreachable (is \`npm start\` running? is AUTH_URL right?): ${errorMessage(err)}\n`,
      );
      return EXIT.unavailable;
    }
    throw err;
  }
  const stop = new AbortController();
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => stop.abort());
  try {
    await runStdioBridge(config, stop.signal);
  } catch (err) {
    if (isTransient(err) || /fetch failed|ECONNREFUSED|HTTP 5\d\d/.test(errorMessage(err))) {
      process.stderr.write(
        `svc mcp: the MCP server at ${config.mcpUrl} is unreachable (is \`npm start\` running?): ${errorMessage(err)}\n`,
      );
      return EXIT.unavailable;
    }
    throw err;
  }
  return EXIT.ok;
}
