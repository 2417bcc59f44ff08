import type { CDPSession, Page } from 'playwright-core';

/**
 * Scripts of ours that read a customer's page, run in an isolated world of its main frame (as an
 * extension's content script is): the same DOM, but globals and prototypes of their own. In the
 * page's world, the page can replace any API our script calls (String.prototype.slice, JSON,
 * document.images, canvas.toDataURL) and so choose what the script answers and how large that
 * answer is; here it can only choose what its DOM holds.
 *
 * The answer is also bounded in the world before it crosses into this process, where Playwright
 * parses the protocol message on the event loop: every string cut, every list and object capped,
 * and a budget of characters for the whole.
 */

export interface BoundOptions {
  /** Longest string kept (default 2000 characters). */
  readonly maxString?: number;
  /** Characters of the whole answer, strings and keys, 16 for any other value (default 2 000 000). */
  readonly maxTotal?: number;
}

export interface IsolatedWorld {
  /** Runs a script (statements: a library's source) for its effect on the world's globals. */
  inject(source: string): Promise<void>;
  /** The value of `expression` (which may be a promise), bounded; throws what the script threw. */
  evaluate(expression: string, bound?: BoundOptions): Promise<unknown>;
  close(): Promise<void>;
}

// Runs in the isolated world: its Array, Object and String are not the page's.
const BOUND = `((value, maxString, maxTotal) => {
  let left = maxTotal;
  const walk = (v, depth) => {
    if (typeof v === 'string') {
      const s = v.slice(0, Math.max(0, Math.min(maxString, left)));
      left -= Math.max(1, s.length);
      return s;
    }
    left -= 16;
    if (v === null || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : null;
    if (typeof v !== 'object' || depth >= 12) return null;
    if (Array.isArray(v)) {
      const out = [];
      for (let i = 0; i < v.length && i < 5000 && left > 0; i++) out.push(walk(v[i], depth + 1));
      return out;
    }
    const out = {};
    let n = 0;
    for (const key of Object.keys(v)) {
      if (n++ >= 200 || left <= 0) break;
      left -= key.length;
      out[key.slice(0, 200)] = walk(v[key], depth + 1);
    }
    return out;
  };
  return walk(value, 0);
})`;

export async function openIsolatedWorld(page: Page): Promise<IsolatedWorld> {
  const session: CDPSession = await page.context().newCDPSession(page);
  try {
    const { frameTree } = await session.send('Page.getFrameTree');
    const { executionContextId } = await session.send('Page.createIsolatedWorld', {
      frameId: frameTree.frame.id,
      worldName: 'svc-inspect',
      grantUniveralAccess: false,
    });
    const run = async (expression: string): Promise<unknown> => {
      const { result, exceptionDetails } = await session.send('Runtime.evaluate', {
        expression,
        contextId: executionContextId,
        returnByValue: true,
        awaitPromise: true,
      });
      if (exceptionDetails) {
        const described = exceptionDetails.exception?.description ?? exceptionDetails.text;
        throw new Error(String(described).split('\n')[0]!.slice(0, 300));
      }
      return result.value as unknown;
    };
    return {
      async inject(source) {
        // `;0` so that the protocol answers a number, not whatever the source's last statement was.
        await run(`${source}\n;0`);
      },
      evaluate(expression, bound = {}) {
        const maxString = Math.max(1, Math.floor(bound.maxString ?? 2000));
        const maxTotal = Math.max(1, Math.floor(bound.maxTotal ?? 2_000_000));
        return run(`(async () => ${BOUND}(await (${expression}\n), ${maxString}, ${maxTotal}))()`);
      },
      close: () => session.detach().catch(() => undefined),
    };
  } catch (error) {
    await session.detach().catch(() => undefined);
    throw error;
  }
}
