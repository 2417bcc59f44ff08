import { codeFacts, type CodeFacts } from '../../../services/integration/checks/code-facts.ts';
import { task } from '../../../services/platform/work/task.ts';

/** codeFacts on a worker thread, so a test can give it a time budget it cannot overrun unnoticed. */
export const factsOf = (input: { content: string; startLine: number }): CodeFacts => codeFacts(input.content, input.startLine);

export const FACTS_OF = task<{ content: string; startLine: number }, CodeFacts>(new URL(import.meta.url), 'factsOf');
