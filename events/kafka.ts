import net from 'node:net';
import tls from 'node:tls';
import { Kafka, logLevel, type ISocketFactory, type KafkaConfig, type LogEntry, type SASLOptions } from 'kafkajs';
import type { EventLog } from './event-log.ts';

/** TLS to the brokers: PEM contents (not paths), already read by whoever configured it. */
export interface KafkaTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
}

export type KafkaSaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

export interface KafkaSasl {
  mechanism: KafkaSaslMechanism;
  username: string;
  password: string;
}

export interface KafkaSettings {
  brokers: string[];
  clientId: string;
  /** Unset: plaintext, as a broker without a TLS listener needs. */
  ssl?: KafkaTls | undefined;
  /** Unset: no authentication, as a broker without a SASL listener needs. */
  sasl?: KafkaSasl | undefined;
}

const LEVELS: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/** kafkajs logs through our structured logger; its INFO chatter is kept at debug. */
export function createKafka(settings: KafkaSettings, log: EventLog): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: settings.clientId,
    brokers: settings.brokers,
    ...kafkaSecurityOptions(settings),
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 },
    socketFactory: noDelaySocketFactory,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        kafkaLog[LEVELS[level] ?? 'info'](rest, message);
      },
  });
}

/**
 * kafkajs' own socket factory plus TCP_NODELAY, as the Java client sets it. Without it Nagle's
 * algorithm may hold a small request (a produce, a commit, a heartbeat) written while an earlier
 * one on the same connection is unacknowledged until the broker's delayed ACK: up to 40 ms added
 * to a hop of an event's way through the consumers.
 */
export const noDelaySocketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : net.connect({ host, port }, onConnect);
  socket.setKeepAlive(true, 60_000);
  socket.setNoDelay(true);
  return socket;
};

/** kafkajs' `ssl` and `sasl` options; shared with a bench that builds a bare client for comparison. */
export function kafkaSecurityOptions(settings: Pick<KafkaSettings, 'ssl' | 'sasl'>): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  return {
    ...(settings.ssl ? { ssl: { ...settings.ssl } } : {}),
    ...(settings.sasl ? { sasl: kafkajsSasl(settings.sasl) } : {}),
  };
}

/** A fresh object each time: kafkajs writes its authenticator onto the one it is given. */
function kafkajsSasl({ mechanism, username, password }: KafkaSasl): SASLOptions {
  switch (mechanism) {
    case 'plain':
      return { mechanism, username, password };
    case 'scram-sha-256':
      return { mechanism, username, password };
    case 'scram-sha-512':
      return { mechanism, username, password };
  }
}
