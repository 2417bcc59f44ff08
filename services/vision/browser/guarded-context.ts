import type { Browser, BrowserContext, Route, WebSocketRoute } from 'playwright-core';
import { ByteBudget } from './byte-budget.ts';
import { SocksProxy } from './socks-proxy.ts';
import { targetKey, urlTarget, type SsrfGuard } from './ssrf-guard.ts';
import { within, withTimeout } from './time-bounds.ts';

/**
 * A fresh browser context for one capture (no cookies, storage or cache shared with another
 * customer's), with the SSRF guard on both of its layers:
 *  - requests: every request the page makes (navigations, redirects, sub-resources, fetch/XHR,
 *    dedicated workers) passes `context.route`, every WebSocket `context.routeWebSocket`; a refused
 *    one is aborted before any connection and recorded with its URL;
 *  - connections: the context's proxy is a SOCKS5 proxy of this capture's own, which vets and pins the
 *    address of every TCP connection, including those the request layer never sees (preconnects,
 *    WebRTC's TURN over TCP). Refusals there are recorded as tcp://host:port.
 * Both layers share the capture's guard, hence its DNS answers: they cannot disagree.
 */

export interface BlockedRequest {
  readonly url: string;
  readonly reason: string;
}

/** The page's window: CSS pixels, device pixels per CSS pixel (default 1) and colour scheme (default light). */
export interface ContextViewport {
  readonly width: number;
  readonly height: number;
  readonly deviceScaleFactor?: number;
  readonly colorScheme?: 'light' | 'dark';
}

export interface GuardedContextOptions {
  readonly guard: SsrfGuard;
  /** Page weight: bytes received over all connections before further requests are refused. */
  readonly maxBytes: number;
  readonly viewport: ContextViewport;
  /** Bounds the browser's answer to opening the context. */
  readonly timeoutMs: number;
}

export interface GuardedContext {
  readonly context: BrowserContext;
  readonly guard: SsrfGuard;
  readonly budget: ByteBudget;
  /** The first MAX_RECORDED refusals; `blockedCount` counts them all. */
  readonly blocked: readonly BlockedRequest[];
  readonly blockedCount: number;
  close(timeoutMs: number): Promise<void>;
}

const MAX_RECORDED = 200;
const MAX_URL_CHARS = 2048;
const clip = (url: string): string => (url.length > MAX_URL_CHARS ? `${url.slice(0, MAX_URL_CHARS)}…` : url);

export const PAGE_WEIGHT_REASON = 'page weight limit reached';

export async function openGuardedContext(browser: Browser, options: GuardedContextOptions): Promise<GuardedContext> {
  const { guard } = options;
  const budget = new ByteBudget(options.maxBytes);
  const blocked: BlockedRequest[] = [];
  let blockedCount = 0;
  const record = (url: string, reason: string) => {
    blockedCount++;
    if (blocked.length < MAX_RECORDED) blocked.push({ url: clip(url), reason });
  };

  // Connections refused by the proxy, by host:port: a request that then fails for it (a redirect,
  // which context.route does not see) replaces the bare tcp:// record with its URL.
  const refusedConnections = new Map<string, string>();
  const onBlocked = (target: string, reason: string) => {
    refusedConnections.set(target, reason);
    record(`tcp://${target}`, reason);
  };
  const explain = (url: string) => {
    const target = urlTarget(url);
    if ('reason' in target) return;
    const key = targetKey(target.host, target.port);
    const reason = refusedConnections.get(key);
    if (reason === undefined) return;
    const bare = blocked.findIndex((entry) => entry.url === `tcp://${key}`);
    if (bare >= 0) blocked[bare] = { url: clip(url), reason };
    else record(url, reason);
  };

  const proxy = await SocksProxy.start({ guard, budget, onBlocked });
  let context: BrowserContext | undefined;
  try {
    const pending = browser.newContext({
      proxy: { server: proxy.url },
      viewport: { width: options.viewport.width, height: options.viewport.height },
      deviceScaleFactor: options.viewport.deviceScaleFactor ?? 1,
      colorScheme: options.viewport.colorScheme ?? 'light',
      // Service workers would fetch outside context.route; the proxy would still vet them.
      serviceWorkers: 'block',
      acceptDownloads: false,
      ignoreHTTPSErrors: false,
      bypassCSP: false,
      permissions: [],
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    context = await withTimeout(pending, options.timeoutMs, 'opening a browser context').catch((error: unknown) => {
      void pending.then((late) => late.close()).catch(ignoreClosed);
      throw error;
    });
    context.on('requestfailed', (request) => explain(request.url()));
    const onRequest = async (route: Route) => {
      const url = route.request().url();
      const reason = budget.exceeded ? PAGE_WEIGHT_REASON : await refusal(guard, url, ['http:', 'https:']);
      if (reason === undefined) return route.continue().catch(ignoreClosed);
      record(url, reason);
      return route.abort('blockedbyclient').catch(ignoreClosed);
    };
    const onWebSocket = async (ws: WebSocketRoute) => {
      const url = ws.url();
      const reason = budget.exceeded ? PAGE_WEIGHT_REASON : await refusal(guard, url, ['ws:', 'wss:']);
      if (reason === undefined) return void ws.connectToServer();
      record(url, reason);
      return ws.close({ code: 1008, reason: 'blocked' }).catch(ignoreClosed);
    };
    await withTimeout(
      Promise.all([context.route('**/*', onRequest), context.routeWebSocket(() => true, onWebSocket)]),
      options.timeoutMs,
      'routing the browser context',
    );
  } catch (error) {
    await within(context?.close() ?? Promise.resolve(), 2000);
    await proxy.close();
    throw error;
  }

  const opened = context;
  let closing: Promise<void> | undefined;
  return {
    context: opened,
    guard,
    budget,
    blocked,
    get blockedCount() {
      return blockedCount;
    },
    close(timeoutMs: number) {
      closing ??= within(opened.close(), timeoutMs).then(() => proxy.close());
      return closing;
    },
  };
}

async function refusal(guard: SsrfGuard, url: string, schemes: readonly string[]): Promise<string | undefined> {
  // data: and blob: carry their bytes with them; no connection is made for them.
  if (url.startsWith('data:') || url.startsWith('blob:')) return undefined;
  const verdict = await guard.checkUrl(url, schemes);
  return verdict.allowed ? undefined : verdict.reason;
}

/** The context closed under a pending route (capture over or timed out): nothing left to do. */
const ignoreClosed = (): void => undefined;
