import client from 'prom-client';

/** Event-pipeline metrics, registered once on the default registry that /metrics serves. */
export const eventMetrics = {
  published: new client.Counter({
    name: 'svc_events_published_total',
    help: 'Events acknowledged by Kafka, by topic',
    labelNames: ['topic'] as const,
  }),
  handled: new client.Counter({
    name: 'svc_events_handled_total',
    help: 'Events handled by a consumer group, by topic',
    labelNames: ['group', 'topic'] as const,
  }),
  deadLettered: new client.Counter({
    name: 'svc_dlq_messages_total',
    help: 'Messages sent to a dead-letter topic, by consumer group and source topic',
    labelNames: ['group', 'topic'] as const,
  }),
  lag: new client.Gauge({
    name: 'svc_consumer_lag',
    help: 'Messages between the last fetched batch and the partition high watermark',
    labelNames: ['group', 'topic', 'partition'] as const,
  }),
  retries: new client.Counter({
    name: 'svc_consumer_retries_total',
    help: 'Handler attempts that failed and were retried',
    labelNames: ['group', 'topic', 'reason'] as const,
  }),
};
