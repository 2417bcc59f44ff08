import fc from 'fast-check';
import { type BodyDraft, type Encoding, jsonOf, type Template } from './arbitraries.ts';
import { formBodyArb, formEncodingArb } from './form-bodies.ts';

type Headers = [string, string][];

/** What these endpoints use of endpoints.ts's kit (typed here, so the two files do not import each other). */
export interface OauthFuzzKit {
  add(
    name: string,
    service: 'accounts' | 'mcp',
    options: {
      template: Template;
      auth?: fc.Arbitrary<Headers>;
      path?: fc.Arbitrary<string>;
      body?: fc.Arbitrary<BodyDraft>;
      encoding?: fc.Arbitrary<Encoding>;
      limit?: number;
    },
  ): void;
  authArb(real: Headers[], wrongKinds: fc.Arbitrary<Headers>): fc.Arbitrary<Headers>;
  wrongAuth: fc.Arbitrary<Headers>;
  bearer(token: string): Headers[];
  word: fc.Arbitrary<string>;
}

const q = (value: string) => encodeURIComponent(value);

/** Redirect URIs: the loopback kind assistants register, and what must be refused (other schemes, fragments, huge). */
const redirectUri = fc.constantFrom(
  'http://127.0.0.1:33418/callback',
  'http://localhost:6274/oauth/callback',
  'https://assistant.example/cb',
  'javascript:alert(1)',
  'http://127.0.0.1:1/cb#frag',
  'data:text/html,<script>alert(1)</script>',
  'https://user:pass@assistant.example/cb',
  `https://assistant.example/${'p'.repeat(5000)}`,
  '',
  'cb',
);
/** Metadata URLs at addresses no fetch of ours may go to (loopback, private, cloud metadata, not http). */
const privateUrl = fc.constantFrom(
  'http://169.254.169.254/latest/meta-data/',
  'http://127.0.0.1:1/jwks',
  'http://[::1]/jwks',
  'http://10.0.0.1/logo.png',
  'file:///etc/passwd',
  'https://assistant.example/jwks.json',
);

/**
 * The authorization server's endpoints (accounts face) and the MCP face's protected resource
 * metadata (issue 40): registrations with bad redirect URIs, private-address metadata URLs and huge
 * documents; authorization and token requests naming client ID metadata documents at private,
 * unreachable or malformed URLs; authorization requests without PKCE or with foreign resources; token requests with
 * made-up and replayed codes and refresh tokens; and the console's routes with the account token.
 * Every answer must be a clean 4xx (or the documented 2xx/3xx), never a 5xx or an echo of a secret.
 */
export function oauthEndpoints(ctx: { account: { token: string } }, kit: OauthFuzzKit): void {
  const { add, word } = kit;
  const session = kit.authArb(kit.bearer(ctx.account.token), kit.wrongAuth);
  const fakeId = fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9_-]{21,43}$/),
    word,
    fc.constantFrom('%00', '__proto__', 'x'.repeat(3000), '..%2F..'),
  );
  /**
   * Client IDs that are metadata document URLs (the client ID metadata draft): at private and cloud
   * metadata addresses, by literal and by name, not https, with a fragment or credentials, huge, and
   * a public name this machine cannot reach. Each must be refused as a client, never fetched from
   * the private network.
   */
  const clientIdUrl = fc.constantFrom(
    'https://127.0.0.1:1/client.json',
    'https://localhost:1/client.json',
    'https://[::1]/client.json',
    'https://10.0.0.1/client.json',
    'https://169.254.169.254/latest/meta-data/',
    'http://assistant.example/client.json',
    'https://assistant.example/client.json#x',
    'https://user:pass@assistant.example/client.json',
    'https://assistant.example/',
    `https://assistant.example/${'c'.repeat(5000)}.json`,
    'https://assistant.invalid/client.json',
  );
  const clientId = fc.oneof({ arbitrary: fakeId, weight: 3 }, { arbitrary: clientIdUrl, weight: 1 });

  add('POST /oauth/register', 'accounts', {
    template: {
      redirect_uris: jsonOf(
        fc.oneof(
          { arbitrary: fc.array(redirectUri, { minLength: 1, maxLength: 3 }), weight: 4 },
          { arbitrary: fc.constantFrom<unknown>('http://127.0.0.1/cb', [], null, [1], {}), weight: 1 },
        ),
      ),
      client_name: jsonOf(fc.oneof({ arbitrary: word, weight: 4 }, { arbitrary: fc.constant('n'.repeat(60_000)), weight: 1 })),
      token_endpoint_auth_method: jsonOf(fc.constantFrom('none', 'client_secret_basic', 'private_key_jwt', 'tls_client_auth', '')),
      grant_types: jsonOf(fc.constantFrom(['authorization_code', 'refresh_token'], ['implicit'], ['client_credentials'], ['urn:x'])),
      response_types: jsonOf(fc.constantFrom(['code'], ['token'], ['id_token token'], [])),
      jwks_uri: jsonOf(privateUrl),
      logo_uri: jsonOf(privateUrl),
      scope: jsonOf(fc.constantFrom('mcp', 'mcp offline_access', 'openid admin', '')),
    },
  });

  const authorizeQuery = fc
    .record({
      response_type: fc.constantFrom('code', 'token', 'code id_token', ''),
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), fc.constant('')),
      code_challenge_method: fc.constantFrom('S256', 'plain', 'S512', ''),
      resource: fc.constantFrom('http://127.0.0.1:1/mcp', 'https://elsewhere.example/mcp', 'urn:x', 'http://x/#frag', ''),
      scope: fc.constantFrom('mcp', 'mcp offline_access', 'openid', 'admin', ''),
      state: word,
    })
    .chain((params) =>
      fc.subarray(Object.keys(params)).map((kept) => `?${kept.map((k) => `${k}=${q(params[k as keyof typeof params])}`).join('&')}`),
    );
  add('GET /oauth/authorize', 'accounts', { template: {}, path: authorizeQuery.map((query) => `/oauth/authorize${query}`) });

  const tokenForm = {
    grant_type: fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'password', ''),
    client_id: clientId,
    code: fakeId,
    refresh_token: fakeId,
    code_verifier: fc.oneof(fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/), fc.constant('')),
    redirect_uri: redirectUri,
    resource: fc.constantFrom('http://127.0.0.1:1/mcp', 'https://elsewhere.example/mcp', ''),
  };
  add('POST /oauth/token', 'accounts', { template: {}, body: formBodyArb(tokenForm), encoding: formEncodingArb, limit: 56 * 1024 });
  add('POST /oauth/revoke', 'accounts', {
    template: {},
    body: formBodyArb({ token: fakeId, token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'x'), client_id: fakeId }),
    encoding: formEncodingArb,
    limit: 56 * 1024,
  });

  const segment = (id: string) => encodeURI(id).replace(/%25/g, '%');
  add('GET /oauth/interactions/:uid', 'accounts', {
    template: {},
    auth: session,
    path: fakeId.map((id) => `/oauth/interactions/${segment(id)}`),
  });
  add('POST /oauth/interactions/:uid/consent', 'accounts', {
    template: { apiKey: jsonOf(fc.oneof(fc.stringMatching(/^svc_[A-Za-z0-9]{33}$/), word)) },
    auth: session,
    path: fakeId.map((id) => `/oauth/interactions/${segment(id)}/consent`),
  });
  add('POST /oauth/interactions/:uid/deny', 'accounts', {
    template: {},
    auth: session,
    path: fakeId.map((id) => `/oauth/interactions/${segment(id)}/deny`),
  });
  add('GET /oauth/connections', 'accounts', { template: {}, auth: session });
  add('DELETE /oauth/connections/:grantId', 'accounts', {
    template: {},
    auth: session,
    path: fakeId.map((id) => `/oauth/connections/${segment(id)}`),
  });
  add('POST /oauth/resource/verify', 'accounts', {
    template: { token: jsonOf(fc.oneof(fakeId, fc.constant('t'.repeat(5000)))) },
    auth: fc.constantFrom<Headers>([], [['x-svc-resource-proof', 'guess']], [['x-svc-resource-proof', '']]),
  });
  add('GET /.well-known/oauth-authorization-server', 'accounts', { template: {} });
  add('GET /.well-known/oauth-protected-resource/mcp', 'mcp', { template: {} });
}
