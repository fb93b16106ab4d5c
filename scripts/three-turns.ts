import type { ScriptedModel } from '../src/integrations/emulator/scripts/types.ts';

/**
 * A stand-in model for load runs: two `list_dir` calls, then the report. The shared history
 * of the runs that use it has no assistant turn, so every one counted is the fork's own.
 */
export const threeTurns: ScriptedModel = {
  name: 'three-turns',
  respond: ({ request }) =>
    request.messages.filter((m) => m.role === 'assistant').length < 2
      ? { content: [{ type: 'tool_use', name: 'list_dir', input: { path: '.' } }] }
      : {
          content: [
            { type: 'text', text: 'Scope: load\nResult: done\nKey files: -\nFiles changed: none\nIssues: none' },
          ],
        },
};
