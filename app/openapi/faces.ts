import { accountsApi } from '../../services/accounts/accounts.api.ts';
import { webhooksApi } from '../../services/billing/webhook.api.ts';
import { keysAdminApi, keysApi } from '../../services/keys/keys.api.ts';
import { mcpApi } from '../../services/mcp/http/mcp.api.ts';
import { faceDocument } from '../../services/platform/http/face-document.ts';
import type { OpenApiDocument } from '../../services/platform/http/openapi.ts';
import { visionRagApi } from '../../services/vision-rag/vision-rag.api.ts';

/**
 * Every HTTP face's document as `npm start` serves it (ADMIN_PORT unset: the back office on the
 * keys face too), and the back office alone as ADMIN_PORT serves it. Each is the one the running
 * face builds (serveHttp); the committed copies in openapi/ are made from these.
 */
export const FACE_DOCUMENTS: ReadonlyArray<{ name: string; document: () => OpenApiDocument }> = [
  { name: 'accounts', document: () => faceDocument(accountsApi, { metrics: false }) },
  { name: 'keys', document: () => faceDocument(keysApi({ backOffice: true }), { metrics: false }) },
  { name: 'keys-admin', document: () => faceDocument(keysAdminApi, { metrics: true }) },
  { name: 'webhooks', document: () => faceDocument(webhooksApi, { metrics: false }) },
  { name: 'rag', document: () => faceDocument(visionRagApi, { metrics: false }) },
  { name: 'mcp', document: () => faceDocument(mcpApi, { metrics: false }) },
];
