import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { findForkDirective } from '../../../src/integrations/emulator/scripts/conversation.ts';
import { formatReport } from '../../../src/integrations/emulator/scripts/directive.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// Issue 43: a fork whose request the API refused as too large (a tool result made it grow past
// the body limit) failed, and `resume` continued it from its transcript: the same conversation,
// sent into the same 413. Resume now leaves it failed, saying why, and sends nothing for it.

/** Reads big.txt when the directive says so, then reports. */
const reader: ScriptedModel = {
  name: 'big-reader',
  respond({ request }) {
    const fork = findForkDirective(request.messages);
    // its first turn: nothing after the directive's message yet
    if (fork?.message === request.messages.length - 1 && fork.directive.startsWith('read big.txt'))
      return {
        content: [{ type: 'tool_use', name: 'read_file', input: { path: 'big.txt' } }],
        stop_reason: 'tool_use',
      };
    return {
      content: [
        {
          type: 'text',
          text: formatReport({ scope: 'x', result: 'done', keyFiles: [], filesChanged: [], issues: [] }),
        },
      ],
      stop_reason: 'end_turn',
    };
  },
};

const emulator = sharedEmulator({ scripts: [reader], script: 'big-reader', maxBodyBytes: 150_000 });

describe('a fork the API refused as too large', () => {
  it('is not resumed into the same 413: it stays failed, naming why, and nothing is sent for it', async () => {
    const ws = workspace({ 'big.txt': `${'b'.repeat(99)}\n`.repeat(2_500) });
    const runs = workspace({});
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      runDir: runs,
      pool: { maxThreads: 1 },
    });
    let fanId: string;
    try {
      const fan = engine.fanOut(bigSnapshot(`large-${Date.now()}`), ['read big.txt and report', 'report']);
      fanId = fan.id;
      const { forks } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['failed', 'completed']);
      expect(forks[0]!.error).toMatchObject({ data: { status: 413 } });
    } finally {
      await engine.close();
    }
    const refusals = (): number => emulator.current.stats().requests.byStatus['413'] ?? 0;
    const before = refusals();
    expect(before).toBe(1);
    const again = await ForkEngine.create({ baseURL: emulator.current.url, apiKey: 'test', workspace: ws });
    try {
      const { forks } = await again.resume(join(runs, fanId)).settled();
      expect(forks.map((f) => f.status)).toEqual(['failed', 'completed']);
      expect(forks[0]!.error).toMatchObject({ code: 'FORK_REQUEST_TOO_LARGE' });
      expect(forks[0]!.error!.message).toMatch(/^not resumed: the API refused this fork's request as too large/);
      expect(refusals()).toBe(before); // the refused conversation was not sent again
    } finally {
      await again.close();
    }
  });
});
