import { startStack, DEV_PORTS, type Stack } from '../../../deploy/local/stack.ts';
import { SERVICES } from '../registry.ts';
import { printUrls, startServices, untilSignal } from './run.ts';

async function startLocalStack(dataDir: string): Promise<Stack> {
  const existing = {
    ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
    ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : {}),
    ...(process.env.SMTP_URL ? { SMTP_URL: process.env.SMTP_URL, MAILPIT_URL: process.env.MAILPIT_URL ?? '' } : {}),
  };
  process.stderr.write('starting the local stack (Kafka, FerretDB, Mailpit)...\n');
  return startStack({ dataDir, ports: DEV_PORTS, existing, progress: (l) => process.stderr.write(`  ${l}\n`) });
}

function printStack(stack: Stack): void {
  process.stdout.write('local stack:\n');
  process.stdout.write(`  kafka    ${stack.env.KAFKA_BROKERS}\n  mongodb  ${stack.env.MONGODB_URI}\n  smtp     ${stack.env.SMTP_URL}\n`);
  if (stack.env.MAILPIT_URL) process.stdout.write(`  mail API ${stack.env.MAILPIT_URL}/api/v1/messages\n`);
}

export async function startCommand(dataDir: string): Promise<number> {
  const stack = await startLocalStack(dataDir);
  try {
    const platform = await startServices(SERVICES, { ...process.env, ...stack.env });
    printStack(stack);
    process.stdout.write('services:\n');
    printUrls(platform.services);
    process.stdout.write('press Ctrl-C to stop\n');
    await untilSignal();
    await platform.stop();
  } finally {
    await stack.stop();
  }
  return 0;
}

export async function stackCommand(dataDir: string): Promise<number> {
  const stack = await startLocalStack(dataDir);
  printStack(stack);
  process.stdout.write(
    `environment:\n  export KAFKA_BROKERS=${stack.env.KAFKA_BROKERS} MONGODB_URI=${stack.env.MONGODB_URI} SMTP_URL=${stack.env.SMTP_URL} MAILPIT_URL=${stack.env.MAILPIT_URL}\npress Ctrl-C to stop\n`,
  );
  await untilSignal();
  await stack.stop();
  return 0;
}
