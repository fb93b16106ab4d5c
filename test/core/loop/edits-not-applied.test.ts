import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { problemLines } from '../../../src/cli/output/summary-table.ts';
import type { FanOutResult } from '../../../src/core/agent/fork-handle.ts';
import { runForkLoop } from '../../../src/core/loop/run-fork.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { createToolExecutor, type ToolExecutor } from '../../../src/core/tools/executor.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

// Issue 15, case 1: a fork whose edit could not be applied ended `completed` and the run
// exited 0. Its outcome now lists the edit, and the summary names the fork.

const emulator = sharedEmulator({ script: 'refactor' });

describe('an edit a fork could not apply', () => {
  it('is listed in the outcome, and the summary names the fork and the file', async () => {
    const ws = workspace({ 'users.ts': 'export const fetchData = 1;\nexport const other = fetchData;\n' });
    const mine = createToolExecutor({ workspace: ws });
    const sibling = createToolExecutor({ workspace: ws });
    // a sibling fork renames the identifier away just before this fork's edit runs (a real conflict)
    const tools: ToolExecutor = Object.assign(Object.create(mine) as ToolExecutor, {
      execute: async (name: string, input: unknown, options?: { signal?: AbortSignal }) => {
        if (name === 'edit_file')
          await sibling.execute('edit_file', {
            path: 'users.ts',
            old_string: 'fetchData',
            new_string: 'takenBySibling',
            replace_all: true,
          });
        return mine.execute(name, input, options);
      },
    });
    const prefix = freeze(bigSnapshot(`not-applied-${Date.now()}`));
    const client = new Anthropic({ apiKey: 'test', baseURL: emulator.current.url, maxRetries: 0 });
    const outcome = await runForkLoop({
      prefix,
      child: prefix.child('rename fetchData to loadData in users.ts'),
      transport: { send: (body, o) => streamMessageBytes(client, body, o) },
      tools,
    });
    expect(outcome.status).toBe('completed');
    expect(outcome.editsNotApplied).toEqual([{ path: 'users.ts', code: 'TOOL_EDIT_CONFLICT' }]);
    const result = { forks: [{ ...outcome, forkId: 'fo001-x-f01' }] } as unknown as FanOutResult;
    expect(problemLines(result)).toEqual([
      "edit not applied  fo001-x-f01: users.ts (TOOL_EDIT_CONFLICT); the fork's last edit of this file failed",
    ]);
  });
});
