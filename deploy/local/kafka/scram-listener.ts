import { randomBytes } from 'node:crypto';

/**
 * A second listener on the local broker that takes SASL/SCRAM-SHA-512 only (SASL_PLAINTEXT), beside
 * the plaintext one everything else uses: tests of the platform's KAFKA_SASL_* settings get a real
 * secured broker without a second JVM. The one user is created when the storage is formatted
 * (KRaft keeps SCRAM credentials in the metadata log), so it exists only on a fresh data folder.
 */
export interface KafkaScramListener {
  /** host:port of the SASL_PLAINTEXT listener. */
  brokers: string;
  mechanism: 'scram-sha-512';
  username: string;
  password: string;
}

/** The listener's name in server.properties; its per-listener settings are prefixed with it in lower case. */
const LISTENER = 'SASL_SCRAM';

export function scramListener(port: number): KafkaScramListener {
  // Hex: the format tool's [name=...,password=...] syntax has no escaping worth relying on.
  return { brokers: `127.0.0.1:${port}`, mechanism: 'scram-sha-512', username: 'svc', password: randomBytes(18).toString('hex') };
}

/** server.properties with the listener added to `listeners`, `advertised.listeners` and the protocol map. */
export function withScramListener(properties: string, listener: KafkaScramListener): string {
  const address = listener.brokers;
  const append = (key: string, item: string) => (text: string) => {
    const line = new RegExp(`^${key.replaceAll('.', '\\.')}=(.*)$`, 'm');
    if (!line.test(text)) throw new Error(`server.properties has no ${key} line to add the SCRAM listener to`);
    return text.replace(line, (_m, value: string) => `${key}=${value},${item}`);
  };
  const prefix = `listener.name.${LISTENER.toLowerCase()}`;
  return (
    [
      append('listeners', `${LISTENER}://${address}`),
      append('advertised.listeners', `${LISTENER}://${address}`),
      append('listener.security.protocol.map', `${LISTENER}:SASL_PLAINTEXT`),
    ].reduce((text, step) => step(text), properties) +
    [
      '',
      '############################# SCRAM listener (tests only) #############################',
      `${prefix}.sasl.enabled.mechanisms=SCRAM-SHA-512`,
      `${prefix}.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`,
      '',
    ].join('\n')
  );
}

/** The `kafka-storage format --add-scram` argument that creates the listener's user. */
export function scramFormatArgument(listener: KafkaScramListener): string {
  return `SCRAM-SHA-512=[name=${listener.username},password=${listener.password}]`;
}
