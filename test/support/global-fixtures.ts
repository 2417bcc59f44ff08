import { stopStack } from './stack.ts';

export async function mochaGlobalTeardown(): Promise<void> {
  await stopStack();
}
