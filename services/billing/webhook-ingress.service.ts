import type { ServiceModule } from '../platform/service.ts';
import { serveHttp } from '../platform/wiring.ts';
import { webhooksApi } from './webhook.api.ts';
import { mountRawWebhookBody, mountWebhookRoute } from './webhook.routes.ts';

/**
 * The payment webhook ingress: HTTP face on WEBHOOKS_PORT that verifies the provider's signature
 * and records each webhook in Kafka. No consumers: billing processes the recorded webhooks.
 */
export const webhookIngressService: ServiceModule = {
  name: 'webhooks',
  description: 'payment provider webhooks, signature-checked and recorded in Kafka (POST /webhooks/payment)',
  async start(rt) {
    const { config } = rt;
    const log = rt.log.child({ service: 'webhooks' });
    // The ingress needs Kafka and nothing else: a MongoDB outage must not take it out of rotation.
    const dependencies = Object.fromEntries(Object.entries(rt.dependencies).filter(([name]) => name === 'kafka'));
    const server = await serveHttp(rt, log, {
      service: 'webhooks',
      port: config.ports.webhooks,
      dependencies,
      api: webhooksApi,
      beforeJson: (a) => mountRawWebhookBody(a, config.http.bodyLimit),
      mount: (a) => mountWebhookRoute(a, { secret: config.secrets.paymentWebhookSecret, publisher: rt.publisher, scope: config.payments }),
    });
    return { name: 'webhooks', url: server.url, stop: () => server.close() };
  },
};
