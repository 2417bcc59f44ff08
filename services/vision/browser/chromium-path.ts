import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CaptureError } from './capture-error.ts';

/**
 * Which Chromium the pool launches: CHROMIUM_PATH when the user names their own, else the one that
 * deploy/local/chromium/provision.sh unpacked into the cache. The version here must be the one that
 * script pins (a unit test compares them).
 */
export const CHROMIUM_PACKAGE_VERSION = '153.0.0';

export const PROVISION_COMMAND = 'bash deploy/local/chromium/provision.sh';

export type ChromiumEnv = Readonly<Record<string, string | undefined>>;

export function provisionedChromiumDir(env: ChromiumEnv = process.env): string {
  const cacheRoot = env.SVC_CACHE_DIR || join(env.HOME || homedir(), '.cache', 'svc');
  return join(cacheRoot, `chromium-${CHROMIUM_PACKAGE_VERSION}`);
}

const isExecutable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The executable to launch; throws BROWSER_FAILED saying how to install it when there is none. */
export function resolveChromiumPath(env: ChromiumEnv = process.env): string {
  const own = env.CHROMIUM_PATH;
  if (own) {
    if (!isExecutable(own)) throw new CaptureError('BROWSER_FAILED', `CHROMIUM_PATH=${own} is not an executable file`);
    return own;
  }
  const dir = provisionedChromiumDir(env);
  const wrapper = join(dir, 'chromium');
  // The marker is written last, so a half-unpacked cache is not mistaken for an installed browser.
  if (existsSync(join(dir, '.complete')) && isExecutable(wrapper)) return wrapper;
  throw new CaptureError(
    'BROWSER_FAILED',
    `Chromium ${CHROMIUM_PACKAGE_VERSION} is not installed in ${dir}: run \`${PROVISION_COMMAND}\` ` +
      '(npm start and npm test run it through deploy/local/install.sh), or set CHROMIUM_PATH to a Chromium of your own',
  );
}
