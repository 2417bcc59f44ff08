/**
 * The browser's own Playwright server, in a process of its own: Playwright's server side (the
 * DevTools protocol traffic of every page, network tracking, waits) would otherwise run on the event
 * loop that answers every customer's requests. Started by browser-pool.ts with the launch options as
 * its one argument; prints `{wsEndpoint, pid}` on its first line; closes the browser and exits when
 * its parent goes (stdin closes) or on SIGTERM.
 */
import { chromium, type LaunchOptions } from 'playwright-core';

const options = JSON.parse(process.argv[2] ?? '{}') as LaunchOptions;
const server = await chromium.launchServer({ ...options, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  void server
    .close()
    .catch(() => undefined)
    .finally(() => process.exit(0));
};
process.stdout.write(`${JSON.stringify({ wsEndpoint: server.wsEndpoint(), pid: server.process().pid })}\n`);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
// Ctrl-C reaches the whole process group: the pool that started this server stops it in order
// (its captures' contexts first), and this process must not pull the browser from under it.
process.on('SIGINT', () => undefined);
// The browser gone (crashed, killed): nothing left to serve.
server.process().once('exit', () => process.exit(0));
