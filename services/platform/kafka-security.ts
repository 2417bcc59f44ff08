import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { KafkaSasl, KafkaSaslMechanism, KafkaTls } from '../../events/kafka.ts';

/**
 * TLS and SASL to the brokers (issue 15, item 4): without them anyone who reaches a broker can
 * publish `key.generated` or subscription events. Certificates are read here, at start-up, so a
 * wrong path fails the boot with the variable's name instead of the first connection.
 */

const bool = z.enum(['true', 'false'], { error: 'must be true or false' });

/** Spread into config.ts's schema, so every variable is listed with the rest (and in .env.example). */
export const KAFKA_SECURITY_SCHEMA = {
  KAFKA_SSL: bool.default('false'),
  KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
  KAFKA_SSL_CERT_FILE: z.string().min(1).optional(),
  KAFKA_SSL_KEY_FILE: z.string().min(1).optional(),
  KAFKA_SSL_REJECT_UNAUTHORIZED: bool.optional(),
  KAFKA_SASL_MECHANISM: z
    .enum(['plain', 'scram-sha-256', 'scram-sha-512'], { error: 'must be plain, scram-sha-256 or scram-sha-512' })
    .optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  // A secret: checked below (present when a mechanism is), by rules whose messages cannot quote it.
  KAFKA_SASL_PASSWORD: z.string().optional(),
};

const securityEnv = z.object(KAFKA_SECURITY_SCHEMA);
export type KafkaSecurityEnv = z.infer<typeof securityEnv>;

export interface KafkaSecurity {
  ssl?: KafkaTls;
  sasl?: KafkaSasl;
}

/** Builds kafkajs' `ssl` and `sasl` options; what is wrong is pushed to `problems`, one line per variable. */
export function kafkaSecurity(env: KafkaSecurityEnv, production: boolean, problems: string[]): KafkaSecurity {
  const ssl = tls(env, production, problems);
  const sasl = saslOptions(env, problems);
  // PLAIN sends the password as it is: over a plaintext connection anyone on the path reads it.
  if (production && sasl?.mechanism === 'plain' && !ssl) {
    problems.push(
      'KAFKA_SASL_MECHANISM: plain sends the password in clear; set KAFKA_SSL=true or use scram-sha-512 when NODE_ENV=production',
    );
  }
  return { ...(ssl ? { ssl } : {}), ...(sasl ? { sasl } : {}) };
}

function tls(env: KafkaSecurityEnv, production: boolean, problems: string[]): KafkaTls | undefined {
  if (env.KAFKA_SSL !== 'true') {
    for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE', 'KAFKA_SSL_REJECT_UNAUTHORIZED'] as const) {
      if (env[name] !== undefined) problems.push(`${name}: only used with KAFKA_SSL=true (set it, or unset ${name})`);
    }
    return undefined;
  }
  const rejectUnauthorized = env.KAFKA_SSL_REJECT_UNAUTHORIZED !== 'false';
  if (!rejectUnauthorized && production) {
    problems.push(
      'KAFKA_SSL_REJECT_UNAUTHORIZED: false is refused when NODE_ENV=production (anyone could pose as the broker); give the CA in KAFKA_SSL_CA_FILE',
    );
  }
  if ((env.KAFKA_SSL_CERT_FILE === undefined) !== (env.KAFKA_SSL_KEY_FILE === undefined)) {
    problems.push(
      'KAFKA_SSL_CERT_FILE: a client certificate needs its key, and a key its certificate: set both KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE, or neither',
    );
  }
  const ca = pemFile('KAFKA_SSL_CA_FILE', env.KAFKA_SSL_CA_FILE, 'CERTIFICATE', problems);
  const cert = pemFile('KAFKA_SSL_CERT_FILE', env.KAFKA_SSL_CERT_FILE, 'CERTIFICATE', problems);
  const key = pemFile('KAFKA_SSL_KEY_FILE', env.KAFKA_SSL_KEY_FILE, 'PRIVATE KEY', problems);
  return {
    rejectUnauthorized,
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
  };
}

/** The file's PEM text; a missing, unreadable or non-PEM file is a problem naming the variable. */
function pemFile(name: string, path: string | undefined, label: string, problems: string[]): string | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    problems.push(`${name}: cannot read ${path} (${code})`);
    return undefined;
  }
  // "PRIVATE KEY" also matches "RSA PRIVATE KEY" and "EC PRIVATE KEY"; an encrypted key is refused by name.
  if (!new RegExp(`-----BEGIN [A-Z ]*${label}-----`).test(text)) {
    problems.push(`${name}: ${path} holds no PEM ${label.toLowerCase()} (-----BEGIN ...${label}-----)`);
    return undefined;
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text)) {
    problems.push(`${name}: ${path} is encrypted; give an unencrypted key (mounted from a secret)`);
    return undefined;
  }
  return text;
}

function saslOptions(env: KafkaSecurityEnv, problems: string[]): KafkaSasl | undefined {
  const mechanism = env.KAFKA_SASL_MECHANISM;
  const username = env.KAFKA_SASL_USERNAME;
  const password = env.KAFKA_SASL_PASSWORD;
  if (mechanism === undefined) {
    if (username !== undefined || password !== undefined) {
      problems.push(
        'KAFKA_SASL_MECHANISM: required when KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD is set (plain, scram-sha-256 or scram-sha-512)',
      );
    }
    return undefined;
  }
  if (username === undefined) problems.push(`KAFKA_SASL_USERNAME: required when KAFKA_SASL_MECHANISM is set`);
  if (password === undefined || password.length === 0) problems.push(`KAFKA_SASL_PASSWORD: required when KAFKA_SASL_MECHANISM is set`);
  if (username === undefined || password === undefined || password.length === 0) return undefined;
  return new SaslCredentials(mechanism, username, password);
}

/**
 * The password lives in a private field behind a getter: kafkajs reads it by name, while
 * JSON.stringify, util.inspect and a logger handed the config (or a part of it) never see it.
 */
export class SaslCredentials implements KafkaSasl {
  readonly mechanism: KafkaSaslMechanism;
  readonly username: string;
  readonly #password: string;

  constructor(mechanism: KafkaSaslMechanism, username: string, password: string) {
    this.mechanism = mechanism;
    this.username = username;
    this.#password = password;
  }

  get password(): string {
    return this.#password;
  }
}

/** The KAFKA_SSL* and KAFKA_SASL_* variables set in `env`, for a child process pointed at the same cluster. */
export function kafkaSecurityVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of Object.keys(KAFKA_SECURITY_SCHEMA)) {
    const value = env[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}
