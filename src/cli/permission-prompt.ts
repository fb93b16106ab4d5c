import { createInterface } from 'node:readline/promises';
import type { PermissionAnswer, PermissionHandler, PermissionRequest } from '../core/tools/permissions.ts';
import { terminalSafe } from '../core/util/terminal-text.ts';

interface PromptOptions {
  /** `--allow-asks`: answer yes to every question (for non-interactive runs that should proceed). */
  allowAll: boolean;
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  output?: NodeJS.WritableStream;
}

/** The question: the model wrote the input (JSON leaves C1 controls and bidi overrides raw), so it is escaped. */
function describe(request: PermissionRequest): string {
  const input = JSON.stringify(request.input);
  return terminalSafe(
    `${request.forkId} wants to run ${request.tool} ${input.length > 200 ? `${input.slice(0, 200)}…` : input}`,
  );
}

/**
 * The CLI's answer to a fork's `ask`: yes to everything with `--allow-asks`; a y/N question
 * on an interactive terminal (one at a time, forks wait); otherwise no, saying why.
 */
export function terminalPermissionHandler(options: PromptOptions): PermissionHandler {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  if (options.allowAll) return () => ({ allow: true, reason: 'allowed by --allow-asks' });
  if (!input.isTTY)
    return () => ({ allow: false, reason: 'not an interactive terminal; run with --allow-asks to allow' });
  let queue: Promise<unknown> = Promise.resolve();
  return (request) => {
    const answer = queue.then(async (): Promise<PermissionAnswer> => {
      const rl = createInterface({ input, output });
      try {
        const reply = await rl.question(`${describe(request)}. Allow? [y/N] `);
        return /^y(es)?$/i.test(reply.trim()) ? { allow: true } : { allow: false, reason: 'refused at the terminal' };
      } finally {
        rl.close();
      }
    });
    queue = answer.catch(() => undefined);
    return answer;
  };
}
