import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A plain node:http handler in front of a service's Express app, for the one or two routes whose
 * cost is the framework's (POST /validate): true when it took the request, false to hand it, untouched
 * (body unread), to Express.
 */
export type LeanHandler = (req: IncomingMessage, res: ServerResponse) => boolean;
