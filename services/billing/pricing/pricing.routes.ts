import { readFileSync } from 'node:fs';
import type { Express, Response } from 'express';
import type { Tier } from '../../kernel/tiers.ts';
import { renderPricingPage } from './pricing.page.ts';

export const PRICING_PATH = '/pricing';

// Same-origin script, style and requests only: no inline code, no CDN, no framing.
export const PRICING_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const asset = (name: string) => readFileSync(new URL(name, import.meta.url));

/** GET /pricing (server-rendered) and its two assets; `gapOf` says why a tier cannot be bought here. */
export function mountPricingPage(app: Express, gapOf: (tier: Tier) => string | null): void {
  // Rendered once: what it shows changes only with the configuration.
  const page = renderPricingPage({ gapOf });
  const script = asset('./pricing.js');
  const style = asset('./pricing.css');
  const headers = (res: Response, type: string) =>
    res.set({
      'Content-Type': type,
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': PRICING_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
  app.get(PRICING_PATH, (_req, res) => {
    headers(res, 'text/html; charset=utf-8').send(page);
  });
  app.get(`${PRICING_PATH}.js`, (_req, res) => {
    headers(res, 'text/javascript; charset=utf-8').send(script);
  });
  app.get(`${PRICING_PATH}.css`, (_req, res) => {
    headers(res, 'text/css; charset=utf-8').send(style);
  });
}
