/** Exit codes: sysexits-style, so scripts can tell a typo from an outage. */
export const EXIT = { ok: 0, failure: 1, usage: 64, unavailable: 69, config: 78 } as const;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
