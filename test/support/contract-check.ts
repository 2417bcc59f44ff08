import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Every answer a spec's services give, checked against the document the answering face serves
 * (GET /openapi.json): its operation, its status and content type, and a JSON body against the
 * documented schema (ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1). `useContractCheck()`
 * wraps fetch for the spec's duration and fails its last hook with what did not match.
 */

interface Doc {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>>;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** One origin's document, and its operations as path patterns. */
class OriginContract {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #routes: { method: string; pattern: RegExp; path: string }[] = [];
  readonly doc: Doc;

  constructor(doc: Doc) {
    this.doc = doc;
    addFormats.default(this.#ajv);
    this.#ajv.addSchema(doc as object, 'doc');
    for (const [path, item] of Object.entries(doc.paths))
      for (const method of Object.keys(item)) {
        const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`, 'i');
        this.#routes.push({ method, pattern, path });
      }
  }

  /** Problems with one answer; null when no operation of the document is this request's (not checked). */
  check(method: string, pathname: string, status: number, contentType: string | null, body: unknown): string[] | null {
    const route = this.#routes.find((r) => r.method === method && r.pattern.test(pathname));
    if (!route) return null;
    const responses = this.doc.paths[route.path]?.[route.method]?.responses ?? {};
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => responses[k] !== undefined);
    const what = `${method.toUpperCase()} ${pathname} → ${status}`;
    if (!key) return [`${what}: status not in the document`];
    const content = responses[key]?.content;
    if (!content) return body === undefined ? [] : [`${what}: a body where the document has none`];
    const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(media in content)) return [`${what}: content type ${media || '(none)'} not in the document (${Object.keys(content).join(', ')})`];
    if (media !== 'application/json') return [];
    const ref = `doc#/${pointer('paths', route.path, route.method, 'responses', key, 'content', media, 'schema')}`;
    let validate = this.#validators.get(ref);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: ref });
      this.#validators.set(ref, validate);
    }
    if (validate(body)) return [];
    return [`${what}: ${this.#ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 300)}`];
  }
}

export class ContractCheck {
  readonly #origins = new Map<string, Promise<OriginContract | null>>();
  readonly #fetch: typeof fetch;
  readonly problems: string[] = [];
  checked = 0;

  constructor(plainFetch: typeof fetch = globalThis.fetch) {
    this.#fetch = plainFetch;
  }

  /** Checks one answer (read from a clone: the caller still reads the original). */
  async answer(method: string, url: string, res: Response): Promise<void> {
    const { origin, pathname, hostname } = new URL(url);
    if (hostname !== '127.0.0.1' && hostname !== 'localhost') return;
    if (pathname === '/openapi.json') return;
    const contract = await this.#contract(origin);
    if (!contract) return;
    const type = res.headers.get('content-type');
    let body: unknown;
    if (type?.toLowerCase().startsWith('application/json')) {
      const text = await res
        .clone()
        .text()
        .catch(() => '');
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = '(not JSON)';
      }
    } else if (res.status === 204 || res.status === 202 || res.headers.get('content-length') === '0') body = undefined;
    else body = '(not JSON)';
    const problems = contract.check(method.toLowerCase(), pathname, res.status, type, body);
    if (problems === null) return;
    this.checked++;
    this.problems.push(...problems);
  }

  /** A fetch that checks what it gets. */
  readonly fetch: typeof fetch = async (input, init) => {
    const res = await this.#fetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    await this.answer(method, url, res);
    return res;
  };

  #contract(origin: string): Promise<OriginContract | null> {
    let contract = this.#origins.get(origin);
    if (!contract) {
      // A server of the spec's own (a fake provider, a page) serves none: its answers are not checked.
      contract = this.#fetch(`${origin}/openapi.json`)
        .then(async (r) => (r.ok ? new OriginContract((await r.json()) as Doc) : null))
        .catch(() => null);
      this.#origins.set(origin, contract);
    }
    return contract;
  }
}

/**
 * For the whole spec file: fetch checks every answer of a face that serves a document. Call it
 * after the spec's own hooks, so its last hook (which fails on a mismatch) runs after their cleanup.
 */
export function useContractCheck(): { readonly check: () => ContractCheck } {
  let current: ContractCheck | undefined;
  let plain: typeof fetch | undefined;
  before(() => {
    plain = globalThis.fetch;
    current = new ContractCheck(plain);
    globalThis.fetch = current.fetch;
  });
  after(() => {
    if (plain) globalThis.fetch = plain;
    const problems = current?.problems ?? [];
    if (problems.length > 0) throw new Error(`answers that do not match their OpenAPI document:\n${problems.join('\n')}`);
    // A check that saw nothing would pass whatever the faces answer.
    if (current?.checked === 0) throw new Error('the contract check saw no answer of a face that serves a document');
    if (process.env.CONTRACT_CHECK_REPORT) console.log(`contract check: ${current?.checked} answers checked`);
  });
  return {
    check: () => {
      if (!current) throw new Error('the contract check is not installed yet');
      return current;
    },
  };
}
