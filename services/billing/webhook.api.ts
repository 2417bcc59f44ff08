import { z } from 'zod';
import type { ApiFace } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import { VERSION } from '../platform/version.ts';
import type { WebhookIgnoredBecause } from './webhook-scope.ts';

/** What POST /webhooks/payment answers (webhook.routes.ts types its answer with it), and the face's document. */

const REASONS = ['test-mode', 'other-store'] as const satisfies readonly WebhookIgnoredBecause[];

export const webhookAnswer = z.object({
  received: z.literal(true).describe('In the log: the provider may stop retrying.'),
  ignored: z.literal(true).optional().describe('Recorded, but nothing follows: not a subscription event, or out of scope.'),
  reason: z.enum(REASONS).optional().describe('Why an out-of-scope webhook is ignored.'),
});

export type WebhookAnswer = z.output<typeof webhookAnswer>;

// The body is the provider's, recorded byte for byte whatever it holds once the signature holds;
// billing reads it from the log (provider-payload.ts), so the ingress has no schema for it.
const providerBody = z.unknown().describe("The payment provider's webhook (any bytes; the signature covers them exactly).");

export const webhooksApi: ApiFace = {
  name: 'webhooks',
  title: 'svc payment webhooks',
  description: "The payment provider's webhook ingress. Every route, body and status: docs/api.md.",
  version: VERSION,
  errorSchema: errorAnswer,
  operations: [
    {
      method: 'post',
      path: '/webhooks/payment',
      summary: 'Record a signed payment webhook',
      tags: ['webhooks'],
      security: ['webhookSignature'],
      body: { schema: providerBody },
      responses: {
        200: { description: 'Recorded in the log.', schema: webhookAnswer },
        401: { description: 'A missing or wrong signature: nothing recorded.', schema: errorAnswer },
        413: { description: 'A body over HTTP_BODY_LIMIT.', schema: errorAnswer },
        503: { description: 'Kafka did not acknowledge: retry.', schema: errorAnswer, headers: ['Retry-After'] },
      },
    },
  ],
};
