import net from 'node:net';
import tls from 'node:tls';
import { Kafka, logLevel, type ISocketFactory, type KafkaConfig, type LogEntry, type SASLOptions } from 'kafkajs';
import type { EventLog } from './event-log.ts';
import { mendKafkajsRequestQueue } from './kafkajs-request-queue.ts';

// Before any client connects: every connection's request queue is of the mended class.
mendKafkajsRequestQueue();

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

/**
 * The client's retries of a call that cannot reach the broker: bounded (about 9 s in all), so an
 * admin call or a start-up fails instead of hanging while Kafka is away (a publish has its own bound).
 */
const CLIENT_RETRY = { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 } as const;

/**
 * A consumer group member's retries of a broker it cannot reach: about 5 minutes, past any restart
 * or failover of a broker. Not forever: kafkajs goes on with a retry after the consumer is stopped,
 * and a process that has stopped its consumers must not be kept alive by one for long.
 */
const MEMBER_RETRY = { ...CLIENT_RETRY, retries: 150 } as const;

/** The clients consumer group members are built from, per client createKafka made (see consumerClient). */
const forConsumers = new WeakMap<Kafka, () => Kafka>();

/** kafkajs logs through our structured logger; its INFO chatter is kept at debug. */
export function createKafka(settings: KafkaSettings, log: EventLog): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  const client = (retry: KafkaConfig['retry']) =>
    new Kafka({
      clientId: settings.clientId,
      brokers: settings.brokers,
      ...kafkaSecurityOptions(settings),
      connectionTimeout: 3000,
      requestTimeout: 10_000,
      retry,
      socketFactory: noDelaySocketFactory,
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ level, log: entry }: LogEntry) => {
          const { message, ...rest } = entry;
          kafkaLog[LEVELS[level] ?? 'info'](rest, message);
        },
    });
  const kafka = client(CLIENT_RETRY);
  let members: Kafka | undefined;
  forConsumers.set(kafka, () => (members ??= client(MEMBER_RETRY)));
  return kafka;
}

/**
 * The client to build a consumer group member from: the same broker settings, with connection
 * retries that outlast an outage (MEMBER_RETRY). A kafkajs consumer takes its connection retries
 * from the client, not from its own options, and when they run out during an outage (about 9 s with
 * CLIENT_RETRY) it crashes, leaves the group without reaching the broker and starts again under a
 * new member id. The broker, once back, reloads the group with the old member in it and holds the
 * new one's join until the old one's session expires (KAFKA_SESSION_TIMEOUT_MS, 30 s): that long
 * after Kafka is back, nothing of the group is consumed. A member still retrying keeps its id and
 * goes on as soon as the broker answers. A client not made by createKafka is its own.
 */
export function consumerClient(kafka: Kafka): Kafka {
  return forConsumers.get(kafka)?.() ?? kafka;
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
