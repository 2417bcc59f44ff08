import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CHROMIUM_ARGS, FORBIDDEN_ARGS, IGNORED_DEFAULT_ARGS, sandboxByDefault } from '../../../services/vision/browser/chromium-args.ts';
import { CHROMIUM_PACKAGE_VERSION, provisionedChromiumDir, resolveChromiumPath } from '../../../services/vision/browser/chromium-path.ts';
import { isCaptureError } from '../../../services/vision/browser/capture-error.ts';

describe('Chromium set-up (unit)', () => {
  it('launches with none of the flags that weaken the browser for untrusted pages', () => {
    for (const arg of CHROMIUM_ARGS) {
      for (const forbidden of FORBIDDEN_ARGS) expect(arg.startsWith(forbidden), arg).to.equal(false);
      expect(arg).not.to.match(/^--(no-sandbox|user-data-dir|proxy-server)/);
    }
    expect(CHROMIUM_ARGS).to.include.members([
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ]);
    expect(IGNORED_DEFAULT_ARGS).to.include('--enable-unsafe-swiftshader');
  });

  it('keeps the sandbox on for every user but root', () => {
    expect(sandboxByDefault(0)).to.equal(false);
    expect(sandboxByDefault(1000)).to.equal(true);
  });

  it('pins the same package version as the provision script', () => {
    const script = readFileSync(new URL('../../../deploy/local/chromium/provision.sh', import.meta.url), 'utf8');
    expect(/^version="([^"]+)"$/m.exec(script)?.[1]).to.equal(CHROMIUM_PACKAGE_VERSION);
  });

  it('looks in the cache the provision script fills, and says how to fill it', () => {
    expect(provisionedChromiumDir({ SVC_CACHE_DIR: '/x/cache' })).to.equal(`/x/cache/chromium-${CHROMIUM_PACKAGE_VERSION}`);
    expect(provisionedChromiumDir({ HOME: '/home/u' })).to.equal(`/home/u/.cache/svc/chromium-${CHROMIUM_PACKAGE_VERSION}`);
    const missing = (() => {
      try {
        return resolveChromiumPath({ SVC_CACHE_DIR: '/nonexistent/svc-cache' });
      } catch (error) {
        return error;
      }
    })();
    expect(isCaptureError(missing, 'BROWSER_FAILED')).to.equal(true);
    expect((missing as Error).message)
      .to.match(/deploy\/local\/chromium\/provision\.sh/)
      .and.match(/CHROMIUM_PATH/);
  });

  it('takes CHROMIUM_PATH as given, if it is executable', () => {
    expect(resolveChromiumPath({ CHROMIUM_PATH: '/bin/sh' })).to.equal('/bin/sh');
    expect(() => resolveChromiumPath({ CHROMIUM_PATH: '/nonexistent/chrome' })).to.throw(/not an executable/);
  });
});
