import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { freePort, portIsFree } from '../../deploy/local/processes.ts';
import { eventually } from '../support/env.ts';
import { deliver, subscriptionPayload } from '../support/lemonsqueezy.ts';
import { mailTo } from '../support/mailpit.ts';
import { verifyEmail } from '../support/email-verification.ts';

const VARIANT = 601789;

interface Started {
  child: ChildProcess;
  output: () => string;
  /** Ports of everything it started, read from what it printed. */
  ports: number[];
  mailApi: string;
}

/**
 * What a new user does: `svc start`, use it, one Ctrl-C, `svc start` again on the same data. The real
 * command, in a process group of its own as a terminal would run it, on free ports and a throwaway
 * data folder so it can run beside a developer's `npm start`.
 */
describe('`svc start`, stopped with one signal and started again on the same data (e2e)', function () {
  this.timeout(240_000);
  let dataDir: string;
  let services: { accounts: number; keys: number; webhooks: number; console: number };
  let running: Started | undefined;

  before(function () {
    // With servers named in the environment, svc start would use them and start nothing to check.
    if (process.env.KAFKA_BROKERS || process.env.MONGODB_URI || process.env.SMTP_URL) this.skip();
    dataDir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-start-`));
  });

  after(async () => {
    if (running?.child.exitCode === null && running.child.pid !== undefined) process.kill(-running.child.pid, 'SIGKILL');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<Started> {
    services = { accounts: await freePort(), keys: await freePort(), webhooks: await freePort(), console: await freePort() };
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      PAYMENT_VARIANT_TIERS: `${VARIANT}:pro`,
      PAYMENT_ALLOW_TEST_MODE: 'true',
      HTTP_HOST: '127.0.0.1',
    };
    for (const name of [
      'KAFKA_BROKERS',
      'MONGODB_URI',
      'SMTP_URL',
      'MAILPIT_URL',
      'JWT_SECRET',
      'WEBHOOK_SECRET',
      'PAYMENT_WEBHOOK_SECRET',
      'KEY_ENCRYPTION_KEY',
      'CONSOLE_SECRET',
      'KAFKA_TOPIC_PREFIX',
      'MONGODB_DB',
    ])
      delete env[name];
    Object.assign(env, {
      ACCOUNTS_PORT: String(services.accounts),
      KEYS_PORT: String(services.keys),
      WEBHOOKS_PORT: String(services.webhooks),
      CONSOLE_PORT: String(services.console),
    });
    const child = spawn(
      process.execPath,
      ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', 'start', '--data-dir', dataDir, '--stack-ports', 'auto'],
      {
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    await eventually(
      'svc start to be ready',
      async () => {
        if (child.exitCode !== null) throw new Error(`svc start exited with ${child.exitCode}:\n${text}`);
        return text.includes('press Ctrl-C to stop') ? true : undefined;
      },
      180_000,
    );
    const ports = [...text.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
    const mailApi = /mail API (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
    if (!mailApi) throw new Error(`no mail API in:\n${text}`);
    return { child, output: () => text, ports: [...new Set([...ports, services.accounts, services.keys, services.webhooks])], mailApi };
  }

  /** Signals the whole process group, as a terminal's Ctrl-C or a supervisor's TERM would. */
  async function stop(started: Started, signal: NodeJS.Signals): Promise<{ code: number | null; ms: number }> {
    const at = Date.now();
    const exited = new Promise<number | null>((r) => started.child.once('exit', (code) => r(code)));
    process.kill(-started.child.pid!, signal);
    const code = await exited;
    const ms = Date.now() - at;
    const stillOpen = [];
    for (const port of started.ports) if (!(await portIsFree(port))) stillOpen.push(port);
    expect(stillOpen, `ports still served after the stop:\n${started.output()}`).to.deep.equal([]);
    return { code, ms };
  }

  const post = async (base: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('keeps users, keys and mail across a Ctrl-C and a second start, and each stop ends within 10 s', async () => {
    const email = `newcomer-${randomUUID()}@example.test`;
    const password = 'newcomer password';
    const accounts = () => `http://127.0.0.1:${services.accounts}`;
    const keys = () => `http://127.0.0.1:${services.keys}`;

    // Day one.
    running = await start();
    const signup = await post(accounts(), '/auth/signup', { email, password, name: 'Newcomer' });
    expect(signup.status).to.equal(201);
    const token = signup.body.token as string;
    // The webhook below names the address, not the account: the account owns it once the address is verified.
    await verifyEmail({ MAILPIT_URL: running.mailApi }, accounts(), email, token);
    // The customer console: its URL printed with the others, its log-in page served.
    expect(running.output()).to.match(new RegExp(`console\\s+http://127\\.0\\.0\\.1:${services.console}\\n`));
    const login = await fetch(`http://127.0.0.1:${services.console}/login`);
    expect(login.status).to.equal(200);
    expect(await login.text()).to.include('<h1>Log in</h1>');
    const secrets = JSON.parse(readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8')) as Record<string, string>;
    const subscriptionId = String((Date.now() % 90_000_000) + 10_000_000);
    const webhook = subscriptionPayload('subscription_created', {
      subscriptionId,
      userId: null,
      attributes: { user_email: email, variant_id: VARIANT },
    });
    expect((await deliver(`http://127.0.0.1:${services.webhooks}`, secrets.PAYMENT_WEBHOOK_SECRET!, webhook)).status).to.equal(200);
    const mailApi = running.mailApi;
    const [keyMail] = await eventually(
      'the key e-mail',
      async () => {
        const mails = (await mailTo(mailApi, email)).filter((m) => /API key/.test(m.Subject));
        return mails.length > 0 ? mails : undefined;
      },
      60_000,
    );
    const apiKey = /svc_[A-Za-z0-9]{33}/.exec(keyMail!.Text)![0];
    expect((await post(keys(), '/validate', { apiKey })).body).to.include({ valid: true, tier: 'pro' });

    const first = await stop(running, 'SIGINT');
    expect(first.code, running.output()).to.equal(0);
    expect(first.ms, 'Ctrl-C to everything stopped').to.be.lessThan(10_000);

    // Day two, same data.
    running = await start();
    const me = await fetch(`${accounts()}/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status, "yesterday's token").to.equal(200);
    expect(await me.json()).to.include({ email, tier: 'pro' });
    expect((await post(accounts(), '/auth/login', { email, password })).status).to.equal(200);
    expect((await post(keys(), '/validate', { apiKey })).body).to.include({ valid: true, tier: 'pro' });
    // Another password: the same one within minutes is a retried sign-up and gets the account's 201.
    expect((await post(accounts(), '/auth/signup', { email, password: `${password} again`, name: 'Again' })).status).to.equal(409);
    const mails = await mailTo(running.mailApi, email);
    expect(mails.map((m) => m.Subject).sort(), "yesterday's mail is still there, and nothing was sent again").to.deep.equal([
      'Welcome to svc, Newcomer',
      'Your svc API key',
    ]);

    const second = await stop(running, 'SIGTERM');
    expect(second.code, running.output()).to.equal(0);
    expect(second.ms, 'SIGTERM to everything stopped').to.be.lessThan(10_000);
  });
});
