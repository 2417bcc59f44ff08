// The parts of oidc-provider 9 (a JavaScript package without type declarations) that the
// authorization server (services/accounts/oauth) and the single sign-on tests' provider use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ProviderAccount {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  /** What the storage adapter is asked to keep (one instance per model name). */
  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    uid?: string;
    userCode?: string;
    consumed?: number;
  }
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface InteractionRecord {
    uid: string;
    exp: number;
    returnTo: string;
    grantId?: string;
    params: Record<string, unknown>;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    session?: { accountId?: string; uid?: string };
    result?: Record<string, unknown>;
    save(ttl: number): Promise<string>;
  }

  export interface GrantRecord {
    jti: string;
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
    destroy(): Promise<void>;
  }

  export interface AccessTokenRecord {
    jti: string;
    accountId: string;
    clientId: string;
    grantId: string;
    aud?: string | string[];
    scope?: string;
    exp: number;
    isExpired: boolean;
  }

  export interface ClientRecord {
    clientId: string;
    clientName?: string;
    clientUri?: string;
    redirectUris: string[];
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    readonly issuer: string;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: never[]) => void): this;
    readonly Interaction: { find(uid: string): Promise<InteractionRecord | undefined> };
    readonly Grant: {
      new (init: { accountId: string; clientId: string }): GrantRecord;
      find(id: string): Promise<GrantRecord | undefined>;
    };
    readonly AccessToken: { find(value: string): Promise<AccessTokenRecord | undefined> };
    readonly Client: { find(id: string): Promise<ClientRecord | undefined> };
  }
  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
  };
  export default Provider;
}
