import { createAnthropic } from '@ai-sdk/anthropic';
import { stepCountIs, ToolLoopAgent, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createForkcache, type ForkToolOutput } from '../../../src/ai-sdk.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import { type AppToolCall, appTools, INSTRUCTIONS } from './app-tools.ts';

const emulator = sharedEmulator({ script: 'ai-sdk' });

/** One engine for the file (the tests' options agree); each test has an app of its own. */
let engine: ForkEngine;
beforeAll(async () => {
  engine = await ForkEngine.create({
    baseURL: emulator.current.url,
    apiKey: 'test',
    workspace: workspace(),
    pool: { maxThreads: 2 },
  });
});
afterAll(() => engine?.close());

/** The app's forkcache (its own ledger) and its Anthropic provider, whose fetch it is. */
function app(): { forkcache: ReturnType<typeof createForkcache>; anthropic: ReturnType<typeof createAnthropic> } {
  const forkcache = createForkcache({ engine });
  return {
    forkcache,
    anthropic: createAnthropic({ baseURL: `${emulator.current.url}/v1`, apiKey: 'test', fetch: forkcache.fetch }),
  };
}

describe('forkcache/ai-sdk', () => {
  it('an AI SDK agent with three tools of its own forks 20 children that call them all', async () => {
    const { forkcache, anthropic } = app();
    const calls: AppToolCall[] = [];
    const tools = appTools(calls);
    const agent = new ToolLoopAgent({
      model: anthropic('claude-sonnet-4-6'),
      instructions: INSTRUCTIONS,
      tools: { ...tools, fork: forkcache.forkTool({ tools, readOnly: ['search_tickets', 'lookup_user'] }) },
      stopWhen: stepCountIs(4),
    });
    const result = await agent.generate({ prompt: 'fork 20: triage the open tickets' });
    const output = result.steps[0]!.toolResults.find((r) => r.toolName === 'fork')!.output as ForkToolOutput;
    expect(output.forks).toHaveLength(20);
    expect(output.forks.map((f) => f.status)).toEqual(output.forks.map(() => 'completed'));
    for (const fork of output.forks) expect(fork.report).toContain('add_comment → comment added to triage');
    // every child called the app's three tools through their own execute, with an abort signal
    expect(calls).toHaveLength(60);
    for (const name of ['search_tickets', 'lookup_user', 'add_comment'])
      expect(calls.filter((c) => c.tool === name)).toHaveLength(20);
    expect(calls.every((c) => c.aborts)).toBe(true);
    expect(calls.find((c) => c.tool === 'search_tickets')!.input).toMatchObject({ limit: 3 });
    expect(output.cacheEfficiency).toBeGreaterThanOrEqual(0.99);
    // the parent's answer came after the fork tool's output, and one ledger has both sides
    expect(result.text).toContain('The children reported');
    const summary = forkcache.ledger.summary('parent');
    expect(summary.agents).toMatchObject({ parent: 1, fork: 20 });
    expect(summary.requests).toBeGreaterThanOrEqual(2 + 20 * 4); // the app's two turns, each child's four (and the warm-up)
    expect(summary.forks.completed).toBe(20);
    // the app's two requests are its turns, each once (the calling one is not counted again)
    expect(forkcache.ledger.records().filter((r) => r.kind === 'parent')).toHaveLength(2);
  });

  it("toolsContext: a child's call of a tool gets that tool's context, as the agent's own calls do in ai 7", async () => {
    const { forkcache, anthropic } = app();
    const seen: unknown[] = [];
    const tools = {
      ...appTools([]),
      // ai 7 passes `context` (its `toolsContext` entry); ai 6's types do not know it
      lookup_user: tool({
        description: 'Look a user up by name.',
        inputSchema: z.object({ name: z.string() }),
        execute: async ({ name }, options) => {
          seen.push((options as { context?: unknown }).context);
          return `user ${name}: plan pro`;
        },
      }),
    };
    const toolsContext = { lookup_user: { tenant: 'acme' } };
    const agent = new ToolLoopAgent({
      model: anthropic('claude-sonnet-4-6'),
      instructions: INSTRUCTIONS,
      tools: { ...tools, fork: forkcache.forkTool({ tools, toolsContext }) },
      stopWhen: stepCountIs(4),
    });
    const result = await agent.generate({ prompt: 'fork 2: triage the open tickets' });
    const output = result.steps[0]!.toolResults.find((r) => r.toolName === 'fork')!.output as ForkToolOutput;
    expect(output.forks.map((f) => f.status)).toEqual(['completed', 'completed']);
    expect(seen).toEqual([{ tenant: 'acme' }, { tenant: 'acme' }]);
  });
});
