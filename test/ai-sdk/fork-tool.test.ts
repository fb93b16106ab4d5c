import { createAnthropic } from '@ai-sdk/anthropic';
import { stepCountIs, ToolLoopAgent, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createForkcache, type ForkToolOutput } from '../../src/ai-sdk.ts';
import { ForkEngine } from '../../src/engine/engine.ts';
import { sharedEmulator, workspace } from '../engine/helpers.ts';

const emulator = sharedEmulator({ script: 'ai-sdk' });

interface Call {
  tool: string;
  toolCallId: string;
  input: unknown;
  aborts: boolean;
}

/** The app's own three tools, as an AI SDK app writes them. */
function appTools(calls: Call[]) {
  const record = (name: string, input: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }): void => {
    calls.push({
      tool: name,
      toolCallId: options.toolCallId,
      input,
      aborts: options.abortSignal instanceof AbortSignal,
    });
  };
  return {
    search_tickets: tool({
      description: 'Search the ticket tracker; returns matching ticket ids and titles.',
      inputSchema: z.object({ query: z.string(), limit: z.number().int().min(3) }),
      execute: async (input, options) => {
        record('search_tickets', input, options);
        return { tickets: [{ id: 'T-17', title: `${input.query}: login fails` }] };
      },
    }),
    lookup_user: tool({
      description: 'Look a user up by name.',
      inputSchema: z.object({ name: z.string() }),
      execute: async (input, options) => {
        record('lookup_user', input, options);
        return `user ${input.name}: plan pro`;
      },
    }),
    add_comment: tool({
      description: 'Add a comment to a ticket.',
      inputSchema: z.object({ ticket: z.string(), body: z.string() }),
      execute: async (input, options) => {
        record('add_comment', input, options);
        return `comment added to ${input.ticket}`;
      },
    }),
  };
}

describe('forkcache/ai-sdk', () => {
  it('an AI SDK agent with three tools of its own forks 20 children that call them all', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 2 },
    });
    try {
      const forkcache = createForkcache({ engine });
      const anthropic = createAnthropic({
        baseURL: `${emulator.current.url}/v1`,
        apiKey: 'test',
        fetch: forkcache.fetch,
      });
      const calls: Call[] = [];
      const tools = appTools(calls);
      const agent = new ToolLoopAgent({
        model: anthropic('claude-sonnet-4-6'),
        instructions: `${'You are a support engineer triaging tickets. '.repeat(300)}`,
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
    } finally {
      await engine.close();
    }
  });
});
