import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { MongoClient } from 'mongodb';

const READINESS_TOPIC = '_svc.readiness';

/** A message produced with acks=all and read back by a fresh consumer: the broker really works. */
export async function kafkaRoundTrip(brokers: string[]): Promise<void> {
  const kafka = new Kafka({
    clientId: 'svc-readiness',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 300 },
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 2 } });
  const groupId = `svc-readiness-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, retry: { retries: 2 } });
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(READINESS_TOPIC)) {
      // Short retention keeps reading it from the beginning cheap.
      await admin.createTopics({
        waitForLeaders: true,
        topics: [
          { topic: READINESS_TOPIC, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '600000' }] },
        ],
      });
    }
    const token = randomUUID();
    await producer.connect();
    await producer.send({ topic: READINESS_TOPIC, acks: -1, messages: [{ value: token }] });
    await consumer.connect();
    await consumer.subscribe({ topic: READINESS_TOPIC, fromBeginning: true });
    const seen = new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('round-trip message was not consumed within 5s')), 5000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          if (message.value?.toString() === token) clearTimeout(t), resolve();
        },
      });
    });
    await seen;
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

export async function mongoPing(uri: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 1000 });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
}

/** Connects and waits for the server's 220 greeting, then says QUIT. */
export async function smtpGreeting(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => (socket.destroy(), reject(new Error('no SMTP greeting within 2s'))), 2000);
    socket.once('error', (err) => (clearTimeout(timer), reject(err)));
    socket.once('data', (chunk) => {
      clearTimeout(timer);
      const line = chunk.toString('latin1');
      socket.end('QUIT\r\n');
      if (line.startsWith('220')) resolve();
      else reject(new Error(`unexpected SMTP greeting: ${line.slice(0, 80)}`));
    });
  });
}

export async function httpOk(url: string): Promise<void> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
}

/**
 * A PostgreSQL start-up handshake (protocol 3.0, trust authentication) that waits for
 * ReadyForQuery: a server still recovering answers with an error instead, so this is real readiness.
 */
export async function postgresReady(host: string, port: number, user = 'postgres'): Promise<void> {
  const params = Buffer.from(`user\0${user}\0database\0postgres\0\0`, 'utf8');
  const startup = Buffer.alloc(8 + params.length);
  startup.writeInt32BE(startup.length, 0);
  startup.writeInt32BE(196608, 4);
  params.copy(startup, 8);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    const done = (err?: Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => done(new Error('no PostgreSQL handshake within 2s')), 2000);
    socket.once('error', (err) => done(err));
    socket.once('connect', () => socket.write(startup));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      while (received.length >= 5) {
        const type = String.fromCharCode(received[0]!);
        const length = received.readInt32BE(1);
        if (received.length < 1 + length) return;
        const body = received.subarray(5, 1 + length);
        received = received.subarray(1 + length);
        if (type === 'E')
          return done(
            new Error(
              `PostgreSQL: ${
                body
                  .toString('utf8')
                  .split('\0')
                  .filter((f) => f.startsWith('M'))
                  .map((f) => f.slice(1))
                  .join(' ') || 'error'
              }`,
            ),
          );
        if (type === 'Z') {
          socket.write(Buffer.from([0x58, 0, 0, 0, 4])); // Terminate
          return done();
        }
      }
    });
  });
}
