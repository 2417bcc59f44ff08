import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { waitUntil } from '../../deploy/local/processes.ts';
import { httpOk, kafkaRoundTrip, mongoPing, postgresReady, smtpGreeting } from '../../deploy/local/probes.ts';

/**
 * The stack as the real images, through testcontainers (SVC_STACK=containers with an engine). Tags are
 * exact: a run names the servers it ran against. Kafka is the deploy files' line, PostgreSQL the local
 * stack's major (18, which the rag database spec checks). It hands the suites the same StackEnv as the
 * local stack; it has no components to stop or kill and no SCRAM listener, so the outage and SASL specs
 * skip themselves, as they do against servers the environment names.
 */
export const IMAGES = {
  kafka: 'apache/kafka:3.9.1',
  mongo: 'mongo:7.0.14',
  mail: 'axllent/mailpit:v1.22.3',
  ragDatabase: 'pgvector/pgvector:0.8.1-pg18',
  /** The release the local stack builds (deploy/local/schema-registry/pom.xml), with its H2 storage. */
  schemaRegistry: 'apicurio/apicurio-registry-sql:2.4.2.Final',
} as const;

export interface ContainersStack {
  env: StackEnv;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 180_000;
const KAFKA_START_SCRIPT = '/tmp/svc-start-kafka.sh';

/**
 * Kafka must advertise the port the engine maps, known only once the container runs: it waits for a
 * start script (as testcontainers' own Kafka module does), which is written with that port.
 */
async function startKafka(): Promise<StartedTestContainer> {
  const container = await new GenericContainer(IMAGES.kafka)
    .withExposedPorts(9092)
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      // CLIENT for the tests on the mapped port; BROKER and CONTROLLER stay inside the container.
      KAFKA_LISTENERS: 'CLIENT://0.0.0.0:9092,BROKER://127.0.0.1:19092,CONTROLLER://127.0.0.1:9093',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CLIENT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@127.0.0.1:9093',
      // As deploy/local/kafka/server.properties.template: the suites rely on explicit topics.
      KAFKA_NUM_PARTITIONS: '3',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '3',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withEntrypoint(['bash', '-c'])
    .withCommand([
      `echo waiting for the start script; while [ ! -f ${KAFKA_START_SCRIPT} ]; do sleep 0.1; done; exec bash ${KAFKA_START_SCRIPT}`,
    ])
    .withWaitStrategy(Wait.forLogMessage('waiting for the start script'))
    .start();
  const advertised = `CLIENT://${container.getHost()}:${container.getMappedPort(9092)},BROKER://127.0.0.1:19092`;
  await container.copyContentToContainer([
    {
      content: `export KAFKA_ADVERTISED_LISTENERS='${advertised}'\nexec /etc/kafka/docker/run\n`,
      target: KAFKA_START_SCRIPT,
      mode: 0o755,
    },
  ]);
  return container;
}

const startMongo = () =>
  new GenericContainer(IMAGES.mongo)
    .withExposedPorts(27017)
    .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
    .start();

const startMail = () =>
  new GenericContainer(IMAGES.mail)
    .withExposedPorts(1025, 8025)
    // The local stack's flags: any SMTP credentials, without TLS, and Mailpit's default of 500 kept.
    .withEnvironment({ MP_SMTP_AUTH_ACCEPT_ANY: 'true', MP_SMTP_AUTH_ALLOW_INSECURE: 'true', MP_MAX_MESSAGES: '500' })
    .withWaitStrategy(Wait.forHttp('/readyz', 8025))
    .start();

const startRagDatabase = () =>
  new GenericContainer(IMAGES.ragDatabase)
    // Trust, as the local cluster: RAG_DATABASE_URL carries no password to end up in a log.
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    // The image's entrypoint starts a first server for its init scripts, then the real one.
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();

const startSchemaRegistry = () =>
  new GenericContainer(IMAGES.schemaRegistry).withExposedPorts(8080).withWaitStrategy(Wait.forHttp('/health/ready', 8080)).start();

export async function startContainersStack(progress: (line: string) => void): Promise<ContainersStack> {
  const started: StartedTestContainer[] = [];
  const timed = async (name: string, start: () => Promise<StartedTestContainer>) => {
    const t = Date.now();
    const container = await start();
    started.push(container);
    progress(`${name} container started in ${((Date.now() - t) / 1000).toFixed(1)}s`);
    return container;
  };
  const stop = async () => {
    await Promise.all(started.splice(0).map((c) => c.stop().catch(() => undefined)));
  };
  try {
    // allSettled: a failed start must not leave the others' containers running until the reaper sees them.
    const results = await Promise.allSettled([
      timed(IMAGES.kafka, startKafka),
      timed(IMAGES.mongo, startMongo),
      timed(IMAGES.mail, startMail),
      timed(IMAGES.ragDatabase, startRagDatabase),
      timed(IMAGES.schemaRegistry, startSchemaRegistry),
    ]);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [kafka, mongo, mail, rag, registry] = results.map((r) => (r as PromiseFulfilledResult<StartedTestContainer>).value) as [
      StartedTestContainer,
      StartedTestContainer,
      StartedTestContainer,
      StartedTestContainer,
      StartedTestContainer,
    ];
    const env: StackEnv = {
      KAFKA_BROKERS: `${kafka.getHost()}:${kafka.getMappedPort(9092)}`,
      MONGODB_URI: `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}/`,
      SMTP_URL: `smtp://${mail.getHost()}:${mail.getMappedPort(1025)}`,
      MAILPIT_URL: `http://${mail.getHost()}:${mail.getMappedPort(8025)}`,
      RAG_DATABASE_URL: `postgres://postgres@${rag.getHost()}:${rag.getMappedPort(5432)}/postgres`,
      SCHEMA_REGISTRY_URL: `http://${registry.getHost()}:${registry.getMappedPort(8080)}/apis/ccompat/v7`,
    };
    // The same real round trips the local stack waits on: a log line is not readiness.
    await Promise.all([
      waitUntil('kafka container', () => kafkaRoundTrip([env.KAFKA_BROKERS]), READY_TIMEOUT_MS),
      waitUntil('mongo container', () => mongoPing(env.MONGODB_URI), READY_TIMEOUT_MS),
      waitUntil(
        'mailpit container',
        async () => {
          await smtpGreeting(mail.getHost(), mail.getMappedPort(1025));
          await httpOk(`${env.MAILPIT_URL}/readyz`);
        },
        READY_TIMEOUT_MS,
      ),
      waitUntil('pgvector container', () => postgresReady(rag.getHost(), rag.getMappedPort(5432)), READY_TIMEOUT_MS),
    ]);
    progress('containers ready');
    return { env, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
