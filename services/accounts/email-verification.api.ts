import type { ApiOperation } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import { VERIFY_PATH, VERIFY_RESEND_PATH, verificationAnswer, verifyInput } from './email-verification-input.ts';

const answer = (description: string) => ({ description, schema: verificationAnswer, headers: ['Cache-Control'] });
const error = (description: string, headers?: readonly string[]) => ({ description, schema: errorAnswer, ...(headers ? { headers } : {}) });
const badToken = error('A missing, malformed, expired, forged or revoked account token.', ['WWW-Authenticate']);

export const emailVerificationOperations: readonly ApiOperation[] = [
  {
    method: 'post',
    path: VERIFY_PATH,
    summary: "Verify the account's address with the link's secret",
    description:
      'The token from the link the welcome (or a resend) e-mail carries, with the session of the account it was mailed for: the link proves the mailbox, the session the account. Used once; works 48 hours; a resend replaces it. Until the address is verified, no subscription is linked to the account by its e-mail (only by the account id a signed-in checkout records).',
    tags: ['accounts'],
    security: ['accountToken'],
    body: { schema: verifyInput },
    responses: {
      200: answer('The address is verified.'),
      400: error("A bad body, or a link that does not verify this account (used, replaced, another account's or forged: one answer)."),
      401: badToken,
      409: error('The account is still being recorded; retry.'),
      410: error("The account's link has expired; ask for a new one."),
      503: error('The database or Kafka is unavailable; retry.', ['Retry-After']),
    },
  },
  {
    method: 'post',
    path: VERIFY_RESEND_PATH,
    summary: "Mail a new verification link to the account's address",
    description:
      'Replaces the current link (the earlier one stops working). Limited per account and per client address, counted across replicas. An account already verified gets 200 and no e-mail.',
    tags: ['accounts'],
    security: ['accountToken'],
    responses: {
      200: answer('The address is already verified; nothing sent.'),
      202: answer('A new link is on its way to the address.'),
      401: badToken,
      409: error('The account is still being recorded; retry.'),
      429: error('Too many verification e-mails for this account or from this address.', ['Retry-After']),
      503: error('The database or Kafka is unavailable; retry.', ['Retry-After']),
    },
  },
];
