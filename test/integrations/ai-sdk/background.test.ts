import { createAnthropic } from '@ai-sdk/anthropic';
import { type ModelMessage, stepCountIs, ToolLoopAgent, tool } from 'ai';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createForkcache, type BackgroundStarted } from '../../../src/ai-sdk.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import { type AppToolCall, appTools, INSTRUCTIONS } from './app-tools.ts';

const emulator = sharedEmulator({ script: 'ai-sdk' });

async function setup(extra: Record<string, unknown> = {}) {
  const engine = await ForkEngine.create({
    baseURL: emulator.current.url,
    apiKey: 'test',
    workspace: workspace(),
    pool: { maxThreads: 2 },
  });
  const forkcache = createForkcache({ engine });
  const anthropic = createAnthropic({ baseURL: `${emulator.current.url}/v1`, apiKey: 'test', fetch: forkcache.fetch });
  const calls: AppToolCall[] = [];
  const tools = appTools(calls);
  const agent = new ToolLoopAgent({
    model: anthropic('claude-sonnet-4-6'),
    instructions: INSTRUCTIONS,
    tools: { ...tools, ...(extra as typeof tools), fork: forkcache.forkTool({ tools, background: true }) },
    stopWhen: stepCountIs(4),
  });
  return { engine, forkcache, agent, calls };
}

describe('forkcache/ai-sdk in the background', () => {
  it('returns a run id at once; the reports come back as a later message, in one ledger', async () => {
    const { engine, forkcache, agent, calls } = await setup();
    try {
      const prompt: ModelMessage[] = [{ role: 'user', content: 'fork 6: triage the open tickets' }];
      const first = await agent.generate({ messages: prompt });
      const started = first.steps[0]!.toolResults.find((r) => r.toolName === 'fork')!.output as BackgroundStarted;
      expect(started).toMatchObject({ status: 'running', forks: 6 });
      expect(first.text).toContain('run in the background');
      expect(forkcache.pending()).toEqual([
        {
          fanoutId: started.fanoutId,
          toolCallId: first.steps[0]!.toolCalls[0]!.toolCallId,
          directives: 6,
          settled: expect.any(Boolean),
        },
      ]);

      const outputs = await forkcache.collect();
      expect(forkcache.pending()).toEqual([]);
      expect(forkcache.takeReports()).toEqual([]); // handed over once
      expect(outputs).toHaveLength(1);
      expect(outputs[0]!.fanoutId).toBe(started.fanoutId);
      expect(outputs[0]!.forks.map((f) => f.status)).toEqual(Array.from({ length: 6 }, () => 'completed'));
      expect(outputs[0]!.cacheEfficiency).toBeGreaterThanOrEqual(0.99);
      for (const name of ['search_tickets', 'lookup_user', 'add_comment'])
        expect(calls.filter((c) => c.tool === name)).toHaveLength(6);

      // the later turn: the conversation so far, then the reports as a message of their own
      const later = await agent.generate({
        messages: [...prompt, ...first.response.messages, forkcache.reportMessage(outputs)],
      });
      expect(later.text).toContain('The background forks reported: 6 completed');

      // one ledger: the app's three requests, each once, and every child's
      const records = forkcache.ledger.records();
      const parents = records.filter((r) => r.kind === 'parent');
      expect(parents).toHaveLength(3);
      const summary = forkcache.ledger.summary('parent');
      expect(summary.agents).toMatchObject({ parent: 1, fork: 6 });
      expect(summary.forks.completed).toBe(6);
    } finally {
      await engine.close();
    }
  });

  it('collect() given up by its signal keeps the runs for a later collect', async () => {
    const { engine, forkcache, agent } = await setup();
    try {
      await agent.generate({ prompt: 'fork 2: triage the open tickets' });
      const stop = new AbortController();
      stop.abort(new Error('the app stopped waiting'));
      await expect(forkcache.collect({ signal: stop.signal })).rejects.toThrow('the app stopped waiting');
      expect(forkcache.pending()).toHaveLength(1);
      // given up while it waits: the run is handed back, still the app's to collect
      const waiting = new AbortController();
      const given = forkcache.collect({ signal: waiting.signal });
      waiting.abort(new Error('enough'));
      await expect(given).rejects.toThrow('enough');
      expect(forkcache.pending()).toHaveLength(1);
      const outputs = await forkcache.collect();
      expect(outputs[0]!.forks).toHaveLength(2);
    } finally {
      await engine.close();
    }
  });

  it('a fan-out refused before it starts is the tool call’s error, and nothing is pending', async () => {
    // a tool the app answers itself (no execute): no child could run it, so the fan-out is refused
    const ask_human = tool({ description: 'Ask the user.', inputSchema: z.object({ question: z.string() }) });
    const { engine, forkcache, agent } = await setup({ ask_human });
    try {
      const result = await agent.generate({ prompt: 'fork 2: triage the open tickets' });
      const error = result.steps[0]!.content.find((p) => p.type === 'tool-error') as { error?: unknown } | undefined;
      expect(String(error?.error)).toMatch(/ask_human/);
      expect(forkcache.pending()).toEqual([]);
      expect(await forkcache.collect()).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
