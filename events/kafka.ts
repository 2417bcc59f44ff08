import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { EventLog } from './event-log.ts';

export interface KafkaSettings {
  brokers: string[];
  clientId: string;
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
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, ...rest } = entry;
        kafkaLog[LEVELS[level] ?? 'info'](rest, message);
      },
  });
}
