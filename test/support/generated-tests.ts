import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { UI_KIT_DIR } from './ui-kit-site.ts';

/**
 * Generated tests, run for real: a copy of the ui-kit fixture in a folder of the test's, the
 * generated files written into it, and the repository's own mocha or Playwright run there (the
 * copy's node_modules is a link to the repository's, so `chai` and `@playwright/test` resolve).
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface GeneratedFileBody {
  path: string;
  content: string;
  encoding?: 'base64';
}

export interface RunOutcome {
  code: number;
  output: string;
}

/** A copy of the ui-kit fixture under `parent`, ready to hold and run generated tests. */
export function uiKitCopy(parent: string, name: string): string {
  const dir = join(parent, name);
  cpSync(UI_KIT_DIR, dir, { recursive: true });
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

export function writeGenerated(dir: string, files: readonly GeneratedFileBody[]): void {
  for (const file of files) {
    const target = join(dir, file.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.encoding === 'base64' ? Buffer.from(file.content, 'base64') : file.content);
  }
}

/** Replaces `from` in one file of the copy (a deliberate bug); throws when `from` is not there. */
export function breakFile(dir: string, path: string, from: string, to: string): void {
  const file = join(dir, path);
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${path} has no ${from}`);
  writeFileSync(file, text.replace(from, to));
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<RunOutcome> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { ...process.env, FORCE_COLOR: '0', ...env }, timeout: 180_000, maxBuffer: 20 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

/** The generated mocha file, run by the repository's mocha with no config of its own. */
export function runMocha(dir: string, file: string): Promise<RunOutcome> {
  return run(process.execPath, [join(REPO, 'node_modules/mocha/bin/mocha.js'), '--no-config', '--reporter', 'dot', file], dir);
}

/**
 * The generated Playwright file, run by @playwright/test with the provisioned Chromium (a config of
 * the test's: no projects, so the default snapshot path holds; the sandbox off only as root, as the
 * service's pool does).
 */
export function runPlaywright(dir: string, file: string, pageUrl?: string): Promise<RunOutcome> {
  const config = join(dir, 'playwright.config.mjs');
  writeFileSync(
    config,
    `export default { testDir: '.', reporter: 'line', workers: 1, retries: 0, timeout: 30000,
  use: { headless: true, launchOptions: { executablePath: ${JSON.stringify(chromiumForTests())}, chromiumSandbox: ${process.getuid?.() !== 0}, args: ['--disable-gpu'] } } };\n`,
  );
  return run(
    process.execPath,
    [join(REPO, 'node_modules/@playwright/test/cli.js'), 'test', '--config', config, file],
    dir,
    pageUrl ? { PAGE_URL: pageUrl } : {},
  );
}
