import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type Server as HttpsServer, createServer as createHttpsServer } from 'node:https';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { join, resolve } from 'node:path';
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { expect } from 'chai';
import { type Browser, type Page, chromium } from 'playwright-core';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { consoleService } from '../../services/console/console.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { CHROMIUM_ARGS, sandboxByDefault } from '../../services/vision/browser/chromium-args.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { eventually, testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, type MintedKey } from '../support/retrieval.ts';
import { selfSignedLoopbackCertificate } from '../support/self-signed.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const SHARED_SECRET = 'ef'.repeat(32);
const KEY_ENCRYPTION_KEY = 'cd'.repeat(32);
const FIXTURE = resolve('test/fixtures/rag-repo');

/** The assistant's side of OAuth, kept in memory as an assistant keeps it on disk: what the SDK's client asks of it. */
class AssistantAuth implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly #redirect: string;
  /** Set: the assistant is known by its client ID metadata document at this https URL, and never registers. */
  readonly clientMetadataUrl: string | undefined;
  constructor(redirect: string, clientMetadataUrl?: string) {
    this.#redirect = redirect;
    this.clientMetadataUrl = clientMetadataUrl;
  }
  get redirectUrl() {
    return this.#redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'E2E Assistant',
      redirect_uris: [this.#redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovery: unknown;
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
}

/**
 * An assistant connects to the MCP server the way the MCP authorization spec says, end to end on the
 * real stack, with the SDK's own client doing the assistant's part and Chromium the person's: 401 and
 * the protected resource metadata, the authorization server's metadata, dynamic registration, log-in
 * and consent in the console, the token, tools/call of a query on the customer's collection; the
 * console lists the assistant and disconnecting it refuses the next call at once; a token for another
 * resource is refused; the token endpoint's rules (PKCE, resource, refresh rotation and reuse).
 */
describe('an assistant connects to the MCP server by OAuth (e2e)', function () {
  this.timeout(240_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let other: RunningPlatform | undefined;
  let browser: Browser;
  let page: Page;
  let dir: string;
  let callback: Server;
  let callbackUrl: string;
  const callbacks: URL[] = [];
  let accounts: string;
  let consoleUrl: string;
  let keys: string;
  let rag: string;
  let mcp: string;
  let otherMcp: string;
  let key: MintedKey;
  const person = { email: `oauth-${randomUUID().slice(0, 8)}@example.test`, password: `pw-${randomUUID()}`, name: 'Olga' };
  const clients: Client[] = [];
  /** Where assistants' client ID metadata documents are served (https on loopback), and what was fetched. */
  let documents: HttpsServer;
  let documentsUrl: string;
  const documentHits: string[] = [];
  const caBefore = getCACertificates('default');

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-mcp-oauth-`));
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    cpSync(FIXTURE, join(workspace, 'shop'), { recursive: true });
    const ports = {
      keys: await freePort(),
      rag: await freePort(),
      mcp: await freePort(),
      accounts: await freePort(),
      console: await freePort(),
    };
    accounts = `http://127.0.0.1:${ports.accounts}`;
    consoleUrl = `http://127.0.0.1:${ports.console}`;
    keys = `http://127.0.0.1:${ports.keys}`;
    rag = `http://127.0.0.1:${ports.rag}`;
    mcp = `http://127.0.0.1:${ports.mcp}/mcp`;
    const common = {
      ACCOUNTS_PORT: String(ports.accounts),
      CONSOLE_PORT: String(ports.console),
      ACCOUNTS_PUBLIC_URL: accounts,
      CONSOLE_PUBLIC_URL: consoleUrl,
      CONSOLE_ACCOUNTS_URL: accounts,
      KEY_ENCRYPTION_KEY,
      CONSOLE_SECRET: 'ab'.repeat(32),
      JWT_SECRET: 'ba'.repeat(32),
      // The metadata documents below are served on loopback; production fetches public addresses only.
      OAUTH_CLIENT_METADATA_ALLOW_LOCAL: 'true',
    };
    const env = retrievalEnv(stack, { ports, dir, workspace, sharedSecret: SHARED_SECRET }, { ...common, MCP_PUBLIC_URL: mcp });
    platform = await startServices([accountsService, keysService, ragService, mcpService, consoleService], env, testLogger());
    // A second MCP server (another resource), trusting the same authorization server.
    const otherPort = await freePort();
    otherMcp = `http://127.0.0.1:${otherPort}/mcp`;
    other = await startServices(
      [mcpService],
      {
        ...env,
        MCP_PORT: String(otherPort),
        MCP_PUBLIC_URL: otherMcp,
        RAG_DATA_DIR: join(dir, 'rag-other'),
        // Its own database and topics: it reaches the keys and accounts services over HTTP only, and its
        // indexer must not take the first platform's jobs.
        MONGODB_DB: `${env.MONGODB_DB}_other`,
        KAFKA_TOPIC_PREFIX: `${env.KAFKA_TOPIC_PREFIX}o.`,
        ACCOUNTS_PORT: String(await freePort()),
      },
      testLogger(),
    );
    key = await mintKey(keys, SHARED_SECRET, 'pro', 'oauth');
    // The customer's collection, indexed with the key over the HTTP face.
    const call = (path: string, body: unknown) =>
      fetch(`${rag}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key.apiKey },
        body: JSON.stringify(body),
      });
    expect((await call('/api/rag/setup', { projectPath: join(workspace, 'shop'), collectionName: 'shop' })).status).to.equal(200);
    const indexing = await call('/api/rag/index', { collectionName: 'shop', wait: true });
    expect(indexing.status).to.be.oneOf([200, 202]);
    const { jobId } = (await indexing.json()) as { jobId: string };
    await eventually(
      'the collection indexed',
      async () => {
        const job = (await (await fetch(`${rag}/api/rag/index/${jobId}`, { headers: { 'x-api-key': key.apiKey } })).json()) as {
          status: string;
        };
        return job.status === 'completed' ? true : undefined;
      },
      120_000,
    );
    const signup = await fetch(`${accounts}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(person),
    });
    expect(signup.status).to.equal(201);

    // The assistant's redirect URI: a loopback listener, as desktop assistants run.
    callback = createServer((req, res) => {
      callbacks.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    });
    await new Promise<void>((done) => callback.listen(0, '127.0.0.1', done));
    const address = callback.address();
    callbackUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/callback`;

    // Client ID metadata documents over https, as the draft requires, with a certificate this process trusts.
    const tls = selfSignedLoopbackCertificate();
    setDefaultCACertificates([...caBefore, tls.cert]);
    documents = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const path = new URL(req.url ?? '/', 'https://127.0.0.1').pathname;
      documentHits.push(path);
      const own = `${documentsUrl}${path}`;
      const body: Record<string, unknown> = {
        client_id: own,
        client_name: 'E2E Metadata Assistant',
        client_uri: documentsUrl,
        redirect_uris: [callbackUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
      if (path === '/huge.json') body.logo_uri = `${documentsUrl}/${'x'.repeat(20_000)}`;
      if (path === '/remote-redirect.json') body.redirect_uris = ['http://assistant.example/callback'];
      if (path === '/not-its-own.json') body.client_id = `${documentsUrl}/assistant.json`;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' }).end(JSON.stringify(body));
    });
    await new Promise<void>((done) => documents.listen(0, '127.0.0.1', done));
    const docsAddress = documents.address();
    documentsUrl = `https://127.0.0.1:${typeof docsAddress === 'object' && docsAddress ? docsAddress.port : 0}`;

    browser = await chromium.launch({
      executablePath: chromiumForTests(),
      headless: true,
      chromiumSandbox: sandboxByDefault(),
      args: [...CHROMIUM_ARGS],
    });
    page = await (await browser.newContext()).newPage();
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await browser?.close();
    await new Promise<void>((done) => (callback ? callback.close(() => done()) : done()));
    await new Promise<void>((done) => (documents ? documents.close(() => done()) : done()));
    setDefaultCACertificates(caBefore);
    await other?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await other?.stop();
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The person opens the authorization URL in the browser, logs in to the console if asked, and is on the consent page. */
  async function openConsentPage(authorizationUrl: string): Promise<void> {
    await page.goto(authorizationUrl);
    if (new URL(page.url()).pathname === '/login') {
      await page.fill('#f-email', person.email);
      await page.fill('#f-password', person.password);
      await page.click('form[action="/login"] button[type="submit"]');
    }
    await page.waitForURL(/\/oauth\/connect\//);
  }

  /** The person's part in the browser: log in to the console, consent, and the assistant's callback is reached. */
  async function personConsents(authorizationUrl: URL, options: { pasteKey: boolean; clientName?: string }): Promise<URL> {
    const before = callbacks.length;
    await openConsentPage(authorizationUrl.href);
    expect(await page.textContent('h1')).to.equal(`Connect ${options.clientName ?? 'E2E Assistant'}?`);
    expect(await page.textContent('main'))
      .to.include('mcp')
      .and.include('127.0.0.1');
    // An assistant known by its metadata document: the page says where that document is.
    if (options.clientName === 'E2E Metadata Assistant')
      expect(await page.textContent('[data-client-document]')).to.equal(new URL(documentsUrl).host);
    if (options.pasteKey) await page.fill('#f-apiKey', key.apiKey);
    await page.click('button[value="allow"]');
    const reached = await eventually('the assistant’s callback', async () => callbacks[before], 15_000).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}; the browser is at ${page.url()}`);
    });
    // The browser has landed there too, so the next navigation does not race the end of this one.
    await page.waitForURL(/\/callback\?/);
    return reached;
  }

  /** The SDK's OAuth flow to the end: 401, discovery, registration, consent, token; a client connected with the token. */
  async function connectByOAuth(auth: AssistantAuth, clientName?: string): Promise<Client> {
    const first = new Client({ name: 'e2e-assistant', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(mcp), { authProvider: auth });
    let refused: unknown;
    try {
      await first.connect(transport);
    } catch (err) {
      refused = err;
    }
    expect(refused, 'the first connection asks for authorization').to.be.instanceOf(UnauthorizedError);
    if (auth.clientMetadataUrl) expect(auth.client?.client_id, 'its metadata document, no registration').to.equal(auth.clientMetadataUrl);
    else expect(auth.client?.client_id, 'registered dynamically').to.be.a('string');
    expect(auth.authorizationUrl?.origin).to.equal(accounts);
    expect(auth.authorizationUrl?.searchParams.get('resource')).to.equal(mcp);
    expect(auth.authorizationUrl?.searchParams.get('code_challenge_method')).to.equal('S256');
    const back = await personConsents(auth.authorizationUrl!, { pasteKey: true, ...(clientName ? { clientName } : {}) });
    expect(back.searchParams.get('code')).to.be.a('string');
    await transport.finishAuth(back.searchParams);
    expect(auth.saved?.access_token).to.be.a('string');
    const client = new Client({ name: 'e2e-assistant', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { authProvider: auth }));
    clients.push(client);
    return client;
  }

  const rawMcp = (url: string, headers: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it('answers a call without credentials 401 with the metadata that names the authorization server', async () => {
    const res = await rawMcp(mcp, {});
    expect(res.status).to.equal(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).to.equal(`http://127.0.0.1:${new URL(mcp).port}/.well-known/oauth-protected-resource/mcp`);
    const metadata = (await (await fetch(metadataUrl!)).json()) as {
      resource: string;
      authorization_servers: string[];
      scopes_supported: string[];
    };
    expect(metadata.resource).to.equal(mcp);
    expect(metadata.authorization_servers).to.deep.equal([accounts]);
    const as = (await (await fetch(`${accounts}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(as).to.include({
      issuer: accounts,
      token_endpoint: `${accounts}/oauth/token`,
      registration_endpoint: `${accounts}/oauth/register`,
    });
    expect(as.code_challenge_methods_supported).to.deep.equal(['S256']);
    // A key still opens the server as before.
    expect((await rawMcp(mcp, { 'x-api-key': key.apiKey })).status).to.equal(200);
    // A protocol version the server does not speak is refused (the SDK's check), a known one served.
    expect((await rawMcp(mcp, { 'x-api-key': key.apiKey, 'mcp-protocol-version': '1999-01-01' })).status).to.equal(400);
    expect((await rawMcp(mcp, { 'x-api-key': key.apiKey, 'mcp-protocol-version': '2025-06-18' })).status).to.equal(200);
  });

  it('drives the SDK client’s OAuth flow with the person in the console, queries the collection, and disconnecting refuses the next call at once', async () => {
    const auth = new AssistantAuth(callbackUrl);
    const client = await connectByOAuth(auth);
    const usageBefore = await usage();
    const answer = (await client.callTool({
      name: 'rag_query',
      arguments: { query: 'where are failed calls tried again with growing waits', collectionName: 'shop', topK: 3 },
    })) as { structuredContent?: { results?: { metadata: { file: string } }[] }; content?: unknown };
    expect(answer.structuredContent?.results?.[0]?.metadata.file, JSON.stringify(answer.content)).to.equal('src/retry.ts');
    // Metered against the subscription chosen at consent, as a call with the key is.
    await eventually('the query counted against the key', async () => ((await usage()).queries > usageBefore.queries ? true : undefined));

    // The console lists the assistant, with the subscription chosen at consent.
    await page.goto(`${consoleUrl}/assistants`);
    const row = page.locator('tr[data-grant]', { hasText: 'E2E Assistant' });
    expect(await row.count()).to.equal(1);
    expect(await row.textContent())
      .to.include('pro')
      .and.include(key.apiKey.slice(-4));

    const token = auth.saved!.access_token;
    expect((await rawMcp(mcp, { authorization: `Bearer ${token}` })).status).to.equal(200);
    await row.locator('button', { hasText: 'Disconnect' }).click();
    await page.waitForURL(/\/assistants\?disconnected=1/);
    const at = Date.now();
    const refused = await rawMcp(mcp, { authorization: `Bearer ${token}` });
    expect(refused.status).to.equal(401);
    expect(Date.now() - at).to.be.below(1000);
    expect(refused.headers.get('www-authenticate'))
      .to.match(/error="invalid_token"/)
      .and.match(/resource_metadata=/);
    expect(await page.locator('tr[data-grant]').count()).to.equal(0);
  });

  it('an assistant known by its client ID metadata document connects with no registration: the server fetches the document, the person consents to the name in it, and the call is served', async () => {
    const as = (await (await fetch(`${accounts}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(as.client_id_metadata_document_supported).to.equal(true);
    const auth = new AssistantAuth(callbackUrl, `${documentsUrl}/assistant.json`);
    const client = await connectByOAuth(auth, 'E2E Metadata Assistant');
    expect(documentHits).to.include('/assistant.json');
    const answer = (await client.callTool({
      name: 'rag_query',
      arguments: { query: 'where are failed calls tried again with growing waits', collectionName: 'shop', topK: 3 },
    })) as { structuredContent?: { results?: { metadata: { file: string } }[] } };
    expect(answer.structuredContent?.results?.[0]?.metadata.file).to.equal('src/retry.ts');
    await page.goto(`${consoleUrl}/assistants`);
    expect(await page.locator('tr[data-grant]', { hasText: 'E2E Metadata Assistant' }).count()).to.equal(1);
    // Its refresh token works with the document's client_id, as a registered client's does.
    const refreshed = await fetch(`${accounts}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: auth.saved!.refresh_token!,
        client_id: auth.clientMetadataUrl!,
        resource: mcp,
      }),
    });
    expect(refreshed.status, await refreshed.clone().text()).to.equal(200);
  });

  it('refuses a client ID metadata document that is too big, that is not its own client_id, or that redirects off https and loopback, each with a clean 4xx', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const authorize = (clientId: string, redirectUri = callbackUrl) => {
      const url = new URL(`${accounts}/oauth/authorize`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'mcp',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        resource: mcp,
      }).toString();
      return fetch(url, { redirect: 'manual' });
    };
    for (const [path, redirect, why] of [
      ['/huge.json', callbackUrl, /fetch failed/],
      ['/not-its-own.json', callbackUrl, /client_id does not match/],
      ['/remote-redirect.json', 'http://assistant.example/callback', /client is not allowed/],
    ] as const) {
      const res = await authorize(`${documentsUrl}${path}`, redirect);
      expect(res.status, path).to.equal(400);
      expect(res.headers.get('content-type'), path).to.match(/application\/json/);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error, path).to.match(/^invalid_client/);
      expect(body.error_description, path).to.match(why);
    }
    // Not a URL the draft allows (http, a fragment): never fetched.
    const hits = documentHits.length;
    for (const clientId of [`http://127.0.0.1:1/assistant.json`, `${documentsUrl}/assistant.json#x`]) {
      const res = await authorize(clientId);
      expect(res.status, clientId).to.equal(400);
      expect(((await res.json()) as { error: string }).error, clientId).to.equal('invalid_client');
    }
    expect(documentHits.length).to.equal(hits);
  });

  it('a second, independent client (mcp-remote, the stdio bridge desktop assistants run) completes the same flow and calls a tool through it', async () => {
    const proxyJs = createRequire(import.meta.url).resolve('mcp-remote/dist/proxy.js');
    const callbackPort = await freePort();
    const proxy = spawn(process.execPath, [proxyJs, mcp, String(callbackPort), '--host', '127.0.0.1'], {
      env: { ...process.env, MCP_REMOTE_CONFIG_DIR: join(dir, 'mcp-remote') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const log: string[] = [];
    const answers = new Map<number, { result?: unknown; error?: unknown }>();
    try {
      createInterface({ input: proxy.stderr }).on('line', (line) => void log.push(line));
      createInterface({ input: proxy.stdout }).on('line', (line) => {
        const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
        if (typeof message.id === 'number') answers.set(message.id, message);
      });
      const send = (message: object) => proxy.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
      const answer = (id: number) =>
        eventually(`mcp-remote's answer ${id}`, async () => answers.get(id), 60_000).catch((err: unknown) => {
          throw new Error(`${(err as Error).message}; its log:\n${log.slice(-30).join('\n')}`);
        });
      // It connects to the server at once, meets the 401, registers and prints where the person goes.
      const at = log.length;
      const authorizationUrl = await eventually(
        'the authorization URL mcp-remote prints',
        async () => {
          const i = log.findIndex((line, n) => n >= at && line.includes('Please authorize this client by visiting:'));
          const url = i >= 0 ? log.slice(i + 1).find((line) => line.startsWith('http')) : undefined;
          return url ? new URL(url.trim()) : undefined;
        },
        60_000,
      );
      expect(authorizationUrl.origin).to.equal(accounts);
      expect(authorizationUrl.searchParams.get('resource')).to.equal(mcp);
      await openConsentPage(authorizationUrl.href);
      expect(await page.textContent('h1')).to.equal('Connect MCP CLI Proxy?');
      await page.fill('#f-apiKey', key.apiKey);
      await page.click('button[value="allow"]');
      await page.waitForURL((url) => url.port === String(callbackPort));
      expect(await page.textContent('body')).to.include('Authorization successful');

      send({
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e-stdio', version: '1.0.0' } },
      });
      expect((await answer(1)).error).to.equal(undefined);
      send({ method: 'notifications/initialized' });
      send({ id: 2, method: 'tools/list', params: {} });
      const tools = (await answer(2)).result as { tools: { name: string }[] };
      expect(tools.tools.map((t) => t.name)).to.include('rag_query');
      send({
        id: 3,
        method: 'tools/call',
        params: {
          name: 'rag_query',
          arguments: { query: 'where are failed calls tried again with growing waits', collectionName: 'shop', topK: 3 },
        },
      });
      const called = (await answer(3)).result as { structuredContent?: { results?: { metadata: { file: string } }[] } };
      expect(called.structuredContent?.results?.[0]?.metadata.file).to.equal('src/retry.ts');
      // The console lists it beside the other assistants, by the name it registered with.
      await page.goto(`${consoleUrl}/assistants`);
      expect(await page.locator('tr[data-grant]', { hasText: 'MCP CLI Proxy' }).count()).to.be.at.least(1);
    } finally {
      proxy.kill('SIGTERM');
      await new Promise((done) => (proxy.exitCode !== null ? done(undefined) : proxy.once('exit', done)));
    }
  });

  it('scopes follow the tier: a key whose subscription lacks the MCP server is refused at consent, before any grant, and a pro key goes on', async () => {
    const free = await mintKey(keys, SHARED_SECRET, 'free', 'oauth-free');
    const auth = new AssistantAuth(callbackUrl);
    const first = new Client({ name: 'e2e-assistant', version: '1.0.0' });
    await first.connect(new StreamableHTTPClientTransport(new URL(mcp), { authProvider: auth })).catch(() => undefined);
    expect(auth.authorizationUrl, 'the flow started').to.not.equal(undefined);
    const before = callbacks.length;
    await openConsentPage(auth.authorizationUrl!.href);
    await page.fill('#f-apiKey', free.apiKey);
    await page.click('button[value="allow"]');
    await page.waitForLoadState();
    expect(await page.textContent('main')).to.include('does not include the MCP server');
    expect(callbacks.length, 'no code went back to the assistant').to.equal(before);
    await page.fill('#f-apiKey', key.apiKey);
    await page.click('button[value="allow"]');
    await eventually('the assistant’s callback', async () => callbacks[before], 15_000);
    await page.waitForURL(/\/callback\?/);
  });

  it('sends progress notifications for an index job when the call gives a progressToken', async () => {
    const client = await connectByOAuth(new AssistantAuth(callbackUrl));
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const files = [{ path: 'src/progress.ts', content: `export const stamp = '${randomUUID()}';\n` }];
    const answer = (await client.callTool(
      { name: 'rag_index', arguments: { collectionName: 'shop', files } },
      { onprogress: (p) => void seen.push(p) },
    )) as { structuredContent?: { status?: string } };
    expect(answer.structuredContent?.status).to.equal('completed');
    expect(seen.length, JSON.stringify(seen)).to.be.at.least(2);
    expect(seen[0]).to.include({ progress: 0, total: 2 });
    expect(seen.at(-1)).to.include({ progress: 2, total: 2 });
    expect(seen.at(-1)?.message).to.match(/completed/);
    // Each report grows, as the protocol requires.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).to.be.greaterThan(seen[i - 1]!.progress);
  });

  it('refuses a token minted for another resource, and mints none for a resource it does not serve', async () => {
    const auth = new AssistantAuth(callbackUrl);
    await connectByOAuth(auth);
    const token = auth.saved!.access_token;
    // The other MCP server trusts the same authorization server: the token is not for it.
    const elsewhere = await rawMcp(otherMcp, { authorization: `Bearer ${token}` });
    expect(elsewhere.status).to.equal(401);
    expect(elsewhere.headers.get('www-authenticate')).to.match(/error="invalid_token"/);
    expect((await rawMcp(mcp, { authorization: `Bearer ${token}` })).status).to.equal(200);
    // An authorization request for a resource this server does not issue for.
    const url = new URL(`${accounts}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: String(auth.client!.client_id),
      redirect_uri: callbackUrl,
      code_challenge: createHash('sha256').update('v'.repeat(50)).digest('base64url'),
      code_challenge_method: 'S256',
      scope: 'mcp',
      resource: 'https://elsewhere.example/mcp',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).to.equal(303);
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).to.equal('invalid_target');
  });

  it('token endpoint: PKCE and the resource are required, codes are single use, a reused refresh token ends the grant', async () => {
    const auth = new AssistantAuth(callbackUrl);
    // Registration and the authorization request by hand, to see each refusal.
    const reg = await fetch(`${accounts}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(auth.clientMetadata),
    });
    expect(reg.status).to.equal(201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const authorize = (params: Record<string, string>) => {
      const url = new URL(`${accounts}/oauth/authorize`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: callbackUrl,
        scope: 'mcp offline_access',
        prompt: 'consent',
        ...params,
      }).toString();
      return url;
    };
    // No PKCE: refused.
    const noPkce = await fetch(authorize({ resource: mcp }), { redirect: 'manual' });
    expect(new URL(noPkce.headers.get('location')!).searchParams.get('error')).to.equal('invalid_request');
    // No resource: refused.
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const noResource = await fetch(authorize({ code_challenge: challenge, code_challenge_method: 'S256' }), { redirect: 'manual' });
    expect(new URL(noResource.headers.get('location')!).searchParams.get('error')).to.equal('invalid_target');
    await page.goto(`${consoleUrl}/assistants`);
    const listedBefore = await page.locator('tr[data-grant]').count();
    // The whole request: the person consents in the console.
    const grantOnce = async () => {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const back = await personConsents(authorize({ code_challenge: challenge, code_challenge_method: 'S256', resource: mcp }), {
        pasteKey: true,
      });
      return { verifier, code: back.searchParams.get('code')! };
    };
    const token = (body: Record<string, string>) =>
      fetch(`${accounts}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: clientId, redirect_uri: callbackUrl, ...body }),
      });
    type Tokens = { access_token: string; refresh_token: string; expires_in: number; error?: string };
    const first = await grantOnce();
    const noTargetCode = await token({ grant_type: 'authorization_code', code: first.code, code_verifier: first.verifier });
    expect(((await noTargetCode.json()) as { error: string }).error).to.equal('invalid_target');
    const second = await grantOnce();
    const wrongVerifier = await token({
      grant_type: 'authorization_code',
      code: second.code,
      code_verifier: 'x'.repeat(43),
      resource: mcp,
    });
    expect(((await wrongVerifier.json()) as { error: string }).error).to.equal('invalid_grant');
    const third = await grantOnce();
    const minted = await token({ grant_type: 'authorization_code', code: third.code, code_verifier: third.verifier, resource: mcp });
    const tokens = (await minted.json()) as Tokens;
    expect(minted.status, JSON.stringify(tokens)).to.equal(200);
    expect(tokens.expires_in).to.be.at.most(600);
    expect((await rawMcp(mcp, { authorization: `Bearer ${tokens.access_token}` })).status).to.equal(200);
    // A replayed code is refused, and ends what was minted with it.
    const replay = await token({ grant_type: 'authorization_code', code: third.code, code_verifier: third.verifier, resource: mcp });
    expect(((await replay.json()) as { error: string }).error).to.equal('invalid_grant');
    expect((await rawMcp(mcp, { authorization: `Bearer ${tokens.access_token}` })).status).to.equal(401);

    const fourth = await grantOnce();
    const fresh = (await (
      await token({ grant_type: 'authorization_code', code: fourth.code, code_verifier: fourth.verifier, resource: mcp })
    ).json()) as Tokens;
    // Refresh without the resource: refused; with it, rotated.
    const noTarget = await token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token });
    expect(((await noTarget.json()) as { error: string }).error).to.equal('invalid_target');
    const rotated = (await (
      await token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token, resource: mcp })
    ).json()) as Tokens;
    expect(rotated.refresh_token, JSON.stringify(rotated)).to.be.a('string').and.not.equal(fresh.refresh_token);
    expect((await rawMcp(mcp, { authorization: `Bearer ${rotated.access_token}` })).status).to.equal(200);
    // The old refresh token again: reuse, so the whole grant ends, the rotated tokens with it.
    const reused = await token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token, resource: mcp });
    expect(((await reused.json()) as { error: string }).error).to.equal('invalid_grant');
    expect((await rawMcp(mcp, { authorization: `Bearer ${rotated.access_token}` })).status).to.equal(401);
    const after = await token({ grant_type: 'refresh_token', refresh_token: rotated.refresh_token, resource: mcp });
    expect(after.status).to.equal(400);
    // The console no longer lists the ended grants; each connection and its end is an audit event.
    await eventually('the reused grant gone from the list', async () => {
      await page.goto(`${consoleUrl}/assistants`);
      // The first two grants stand (never used); the replayed code's and the reused refresh token's ended.
      return (await page.locator('tr[data-grant]').count()) === listedBefore + 2 ? true : undefined;
    });
  });

  it('hostile callers: another account, the verify route without proof, bad redirect URIs, huge registrations, too many registrations', async () => {
    // Olga's connected assistant, and another person's account.
    const auth = new AssistantAuth(callbackUrl);
    await connectByOAuth(auth);
    const login = async (who: { email: string; password: string }) =>
      (
        (await (
          await fetch(`${accounts}/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(who),
          })
        ).json()) as { token: string }
      ).token;
    const olga = await login(person);
    const mallory = { email: `mallory-${randomUUID().slice(0, 8)}@example.test`, password: `pw-${randomUUID()}`, name: 'Mallory' };
    expect(
      (
        await fetch(`${accounts}/auth/signup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(mallory),
        })
      ).status,
    ).to.equal(201);
    const malloryToken = await login(mallory);
    const listOf = async (token: string) =>
      (
        (await (await fetch(`${accounts}/oauth/connections`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          connections: { grantId: string }[];
        }
      ).connections;
    const olgas = await listOf(olga);
    expect(olgas.length).to.be.greaterThan(0);
    expect(await listOf(malloryToken)).to.deep.equal([]);
    // Mallory cannot end Olga's grant: the same 404 as a grant that does not exist.
    const grantId = olgas[0]!.grantId;
    const theirs = await fetch(`${accounts}/oauth/connections/${grantId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${malloryToken}` },
    });
    const none = await fetch(`${accounts}/oauth/connections/nosuchgrant`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${malloryToken}` },
    });
    expect([theirs.status, none.status]).to.deep.equal([404, 404]);
    expect(await theirs.json()).to.deep.equal(await none.json());
    expect((await listOf(olga)).map((c) => c.grantId)).to.include(grantId);
    expect((await rawMcp(mcp, { authorization: `Bearer ${auth.saved!.access_token}` })).status).to.equal(200);
    // Nor can anyone without the account token see or consent to a request.
    expect((await fetch(`${accounts}/oauth/connections`)).status).to.equal(401);
    // The verify route is the MCP server's only: without its proof, 403 and nothing about the token.
    const verify = await fetch(`${accounts}/oauth/resource/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-resource-proof': 'guess' },
      body: JSON.stringify({ token: auth.saved!.access_token }),
    });
    expect(verify.status).to.equal(403);
    expect(JSON.stringify(await verify.json())).to.not.include('sealedKey');
    // A redirect URI the client did not register: an error page of the server's own, no redirect there.
    const url = new URL(auth.authorizationUrl!.href);
    url.searchParams.set('redirect_uri', 'https://attacker.example/cb');
    const bad = await fetch(url, { redirect: 'manual' });
    expect(bad.status).to.equal(400);
    expect(bad.headers.get('location')).to.equal(null);
    expect(((await bad.json()) as { error: string }).error).to.equal('invalid_redirect_uri');
    // A huge registration: refused whole, 4xx.
    const huge = await fetch(`${accounts}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...auth.clientMetadata, client_name: 'x'.repeat(2_000_000) }),
    });
    expect(huge.status).to.be.within(400, 499);
    // Registrations per address: 20 an hour (this spec made a few already), then 429 with Retry-After.
    let status = 0;
    let retryAfter: string | null = null;
    for (let i = 0; i < 25 && status !== 429; i++) {
      const res = await fetch(`${accounts}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(auth.clientMetadata),
      });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
    }
    expect(status).to.equal(429);
    expect(Number(retryAfter)).to.be.greaterThan(0);
  });

  async function usage(): Promise<{ queries: number }> {
    const res = await fetch(`${keys}/usage`, { headers: { authorization: `Bearer ${key.apiKey}` } });
    return ((await res.json()) as { usage: { queries: number } }).usage;
  }
});
