/**
 * Command line of the capture browser: pure, so a unit test can hold the line on what must never
 * be in it. Playwright adds its own defaults (--headless, --disable-extensions, ...) and, when we do not
 * ask for the sandbox, --no-sandbox.
 */

/** Flags that would let an untrusted page escape the browser's own protections. */
export const FORBIDDEN_ARGS = [
  '--disable-web-security',
  '--single-process',
  '--no-zygote',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--disable-features=IsolateOrigins',
  '--disable-setuid-sandbox',
  '--enable-unsafe-swiftshader',
  '--ignore-certificate-errors',
  '--remote-debugging-port',
  '--remote-debugging-address',
] as const;

export const CHROMIUM_ARGS: readonly string[] = [
  '--disable-gpu',
  // Without these the browser phones home at start-up (updates, sync, field trials); on a machine
  // whose network is closed that is dozens of refused connections, and elsewhere it is traffic
  // nobody asked for.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  // QUIC is UDP: it would not go through the SOCKS proxy that vets every connection.
  '--disable-quic',
  // WebRTC: no UDP unless proxied, and a SOCKS proxy carries none, so a page cannot reach private
  // addresses (or learn the host's) through STUN/TURN; TURN over TCP goes through the proxy.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // The browser's own DNS is switched off: every customer connection goes through the capture's
  // SOCKS proxy, which is handed host names and resolves them itself (once, then vets and pins the
  // address). Anything that would still resolve a name in the browser (DNS prefetch, a request that
  // somehow missed the proxy) fails instead of reaching an address nobody checked.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  // A page's JavaScript heap is capped, so a hostile page crashes its own renderer instead of
  // taking gigabytes of a machine it shares.
  '--js-flags=--max-old-space-size=512',
];

/**
 * Playwright defaults removed: SwiftShader as WebGL's software fallback is "unsafe" by Chromium's own
 * naming (a JIT reachable from any page); without it WebGL is unavailable with the GPU off, and a
 * WebGL canvas captures blank.
 */
export const IGNORED_DEFAULT_ARGS: readonly string[] = ['--enable-unsafe-swiftshader'];

/**
 * Chromium refuses to start as root with its sandbox on (the sandbox drops privileges it expects not to
 * have, and running as root defeats it), so the sandbox is off only there; anywhere else it stays on, as
 * it should for pages of strangers. Production should run the pool as an unprivileged user.
 */
export const sandboxByDefault = (uid: number | undefined = process.getuid?.()): boolean => uid !== 0;
