import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { workspace } from './helpers.ts';

// The recorded Claude Code 2.1.332 tool array, as the parent declares it.
const CLAUDE = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../fixtures/claude-code/2.1.332/fork-fanout/wire/04.json'), 'utf8'),
) as { body: { tools: never[]; system: never[] } };

describe('tools no fork runs', () => {
  it('answer the model with what to do instead, and the summary counts them by name', async () => {
    const emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    const engine = await ForkEngine.create({
      baseURL: emu.url,
      apiKey: 'sk-ant-test',
      workspace: workspace(),
      pool: { maxThreads: 1 },
    });
    try {
      const parent = captureSnapshot({
        model: 'claude-opus-5-5',
        max_tokens: 1024,
        system: CLAUDE.body.system,
        tools: CLAUDE.body.tools,
        messages: [{ role: 'user', content: 'hi' }],
      } as never);
      const fan = engine.fanOut(parent, [
        'use ScheduleWakeup and report',
        'use Agent and report',
        'use ScheduleWakeup and report',
      ]);
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed']);
      expect(summary.refused_tools).toEqual({ ScheduleWakeup: 2, Agent: 1 });
      expect(forks[0]!.finalText).toContain('ScheduleWakeup answered "ScheduleWakeup is not available in a fork:');
      expect(forks[1]!.finalText).toContain('Forking is not available inside a fork');
    } finally {
      await engine.close();
      await emu.close();
    }
  });

  it("a policy on bash covers Claude Code's Bash: denied, the model is told; asked, the question names bash", async () => {
    const emu = await startEmulator({ latency: 'off', script: 'claude-code' });
    const asked: string[] = [];
    const engine = await ForkEngine.create({
      baseURL: emu.url,
      apiKey: 'sk-ant-test',
      workspace: workspace({ 'notes.txt': 'one\n' }),
      pool: { maxThreads: 1 },
      allow: ['read_file', 'bash'],
      sandbox: 'none',
      permissions: { tools: { bash: 'ask', read_file: 'deny' } },
      onPermission: (request) => {
        asked.push(request.tool);
        return { allow: false, reason: 'not today' };
      },
    });
    try {
      const parent = captureSnapshot({
        model: 'claude-opus-5-5',
        max_tokens: 1024,
        system: CLAUDE.body.system,
        tools: CLAUDE.body.tools,
        messages: [{ role: 'user', content: 'hi' }],
      } as never);
      const { forks } = await engine
        .fanOut(parent, ['run `echo hi` and report', 'read notes.txt and report'])
        .settled();
      expect(asked).toEqual(['bash']);
      expect(forks[0]!.finalText).toContain('Bash failed: Permission denied for Bash: not today');
      expect(forks[1]!.finalText).toContain('Read failed: Permission denied for Read: denied by the permission policy');
    } finally {
      await engine.close();
      await emu.close();
    }
  });
});
