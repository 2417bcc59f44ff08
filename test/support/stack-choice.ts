/**
 * Which stack a test run uses: the local one (plain processes, or servers the environment names) or,
 * with SVC_STACK=containers and a container engine present, the real images through testcontainers.
 * Decided once per process and said in one line at the start of the run, so a CI log shows it.
 */

export type StackMode = 'local' | 'containers';

export interface StackChoice {
  use: StackMode;
  /** The one line the run prints: which stack, and why. */
  line: string;
}

export type EngineProbe = () => Promise<{ found: true; engine: string } | { found: false; reason: string }>;

const EXISTING = ['KAFKA_BROKERS', 'MONGODB_URI', 'SMTP_URL', 'RAG_DATABASE_URL'] as const;

/** SVC_STACK, checked: unset or empty is the local stack; anything else unknown is an error, not a silent default. */
export function stackMode(env: NodeJS.ProcessEnv): StackMode {
  const value = env.SVC_STACK?.trim() ?? '';
  if (value === '' || value === 'local') return 'local';
  if (value === 'containers') return 'containers';
  throw new Error(`SVC_STACK must be local or containers (or unset, which is local), not "${value}"`);
}

/** testcontainers' own engine discovery (DOCKER_HOST, ~/.testcontainers.properties, the usual sockets). */
export const probeEngine: EngineProbe = async () => {
  // Loaded only when containers were asked for: the default run does not pay for the library.
  const { getContainerRuntimeClient } = await import('testcontainers');
  try {
    const client = await getContainerRuntimeClient();
    const runtime = client.info.containerRuntime;
    return { found: true, engine: `${runtime.operatingSystem} ${runtime.serverVersion} at ${runtime.host}` };
  } catch (err) {
    return { found: false, reason: err instanceof Error ? err.message : String(err) };
  }
};

export async function chooseStack(env: NodeJS.ProcessEnv, probe: EngineProbe = probeEngine): Promise<StackChoice> {
  const mode = stackMode(env);
  const named = EXISTING.filter((name) => env[name]);
  const local = named.length > 0 ? `local, the servers ${named.join(', ')} name` : 'local, started on free ports';
  if (mode === 'local') return { use: 'local', line: `stack: ${local} (SVC_STACK ${env.SVC_STACK ? '= local' : 'unset'})` };
  const engine = await probe();
  if (!engine.found) {
    return { use: 'local', line: `stack: ${local} (SVC_STACK=containers, but no container engine: ${engine.reason})` };
  }
  const ignored = named.length > 0 ? `; ${named.join(', ')} ignored` : '';
  return { use: 'containers', line: `stack: containers, mongo and apache/kafka images (SVC_STACK=containers, ${engine.engine}${ignored})` };
}

let decided: Promise<StackChoice> | undefined;

/** The run's choice, printed once (to stderr, beside the stack's own progress lines). */
export function runStackChoice(): Promise<StackChoice> {
  decided ??= chooseStack(process.env).then((choice) => {
    process.stderr.write(`${choice.line}\n`);
    return choice;
  });
  return decided;
}
