/**
 * The hosts a capture may reach although they are private or internal (`CAPTURE_ALLOWED_HOSTS`).
 * Configuration parses it at start-up, so a malformed entry stops the process; the vision context's
 * SSRF guard applies it.
 */

export interface AllowEntry {
  /** Lower-case, without IPv6 brackets or a trailing dot. */
  readonly host: string;
  /** Absent: any port. */
  readonly port?: number;
}

export type AllowList = readonly AllowEntry[];

export const normalizeHost = (host: string): string => {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.+$/, '');
};

/** `CAPTURE_ALLOWED_HOSTS`: comma-separated `host`, `host:port`, `[v6]` or `[v6]:port`. */
export function parseAllowList(csv: string | undefined): AllowList {
  const entries: AllowEntry[] = [];
  for (const raw of (csv ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)) {
    const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(raw);
    const port = match?.[2] === undefined ? undefined : Number(match[2]);
    if (!match?.[1] || (port !== undefined && (port < 1 || port > 65535))) {
      throw new TypeError(`CAPTURE_ALLOWED_HOSTS: "${raw}" is not host, host:port or [ipv6]:port`);
    }
    entries.push(port === undefined ? { host: normalizeHost(match[1]) } : { host: normalizeHost(match[1]), port });
  }
  return entries;
}

export const isAllowListed = (allow: AllowList, host: string, port: number): boolean => {
  const name = normalizeHost(host);
  return allow.some((entry) => entry.host === name && (entry.port === undefined || entry.port === port));
};
