/** An error whose message is safe to show the caller; anything else answers a generic 500. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { headers?: Record<string, string>; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.headers = options.headers ?? {};
    this.details = options.details;
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new HttpError(400, 'BAD_REQUEST', message, details ? { details } : {});
export const unauthorized = (message: string, headers?: Record<string, string>) =>
  new HttpError(401, 'UNAUTHORIZED', message, headers ? { headers } : {});
export const conflict = (message: string) => new HttpError(409, 'CONFLICT', message);
export const unavailable = (message = 'a dependency is unavailable; retry shortly') =>
  new HttpError(503, 'UNAVAILABLE', message, { headers: { 'Retry-After': '5' } });
