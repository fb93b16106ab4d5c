import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { AGENT_PLACEHOLDER_RESULT } from '../../../src/core/agent/agent-tool.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { FORK_PLACEHOLDER_RESULT, FORK_QUERY_SOURCE } from '../../../src/core/wire/fork-text.ts';
import { wrapDirective } from '../../../src/core/fork/directive.ts';
import { UsageLedger } from '../../../src/core/ledger/ledger.ts';
import { TOOL_DECLARATIONS } from '../../../src/core/tools/declarations.ts';
import { fixture } from '../../helpers.ts';
import { driveClock, workspace, sharedEmulator } from '../engine/helpers.ts';

/** Records the system prompt of every request it answers. */
const seen: string[] = [];
const recorder: ScriptedModel = {
  name: 'recorder',
  respond: ({ request }) => {
    const system = request.system;
    seen.push(typeof system === 'string' ? system : (system ?? []).map((b) => b.text).join(''));
    return {
      content: [{ type: 'text', text: 'Scope: recorded\nResult: ok\nKey files: -\nFiles changed: none\nIssues: none' }],
    };
  },
};

const emulator = sharedEmulator({ scripts: { recorder } });

/** The fixture parent: its request as sent, and the assistant turn with two spawn calls. */
function parentTurn(tag: string) {
  const request = fixture<Record<string, any>>('parent-request.json');
  request['model'] = 'claude-sonnet-4-6';
  request['tools'] = TOOL_DECLARATIONS;
  request['system'][0].text = `${tag}${'Be careful. '.repeat(500)}`;
  const message = request['messages'].pop() as { content: Anthropic.ContentBlockParam[] };
  return { request: request as { messages: Anthropic.MessageParam[] }, message };
}

describe('engine.agentTool()', () => {
  it('forks: placeholders at once, then one notification per fork, exactly once', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 2 },
    });
    try {
      const tool = engine.agentTool();
      expect(tool.definition.name).toBe('agent');
      const results = await tool.handle(parentTurn(`bg-${Date.now()}`));
      expect([...results.entries()]).toEqual([
        ['toolu_02', { content: FORK_PLACEHOLDER_RESULT, isError: false }],
        ['toolu_03', { content: FORK_PLACEHOLDER_RESULT, isError: false }],
      ]);
      await tool.idle();
      const notes = tool.takeNotifications();
      expect(notes).toHaveLength(2);
      const ids = tool.fanOuts[0]!.forks.map((f) => f.forkId);
      for (const id of ids) expect(notes.filter((n) => n.includes(`<task-id>${id}</task-id>`))).toHaveLength(1);
      expect(notes[0]).toMatch(/<status>completed<\/status>/);
      expect(tool.takeNotifications()).toEqual([]);
      expect(tool.pending).toBe(0);
    } finally {
      await engine.close();
    }
  });

  it('an explicit agent type runs a fresh agent with its own prompt, shares nothing, and the ledger says so', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      headers: { 'x-forkcache-script': 'recorder' },
      workspace: workspace(),
      pool: { maxThreads: 1 },
    });
    try {
      const ledger = new UsageLedger();
      const tool = engine.agentTool({
        ledger,
        agentTypes: [
          { name: 'reviewer', system: 'You review code.', model: 'claude-sonnet-4-6', tools: ['read_file'] },
        ],
      });
      const { request, message } = parentTurn(`fresh-${Date.now()}`);
      (message.content[1] as Anthropic.ToolUseBlockParam).input = {
        directive: 'review a.ts',
        subagent_type: 'reviewer',
      };
      (message.content[2] as Anthropic.ToolUseBlockParam).input = { directive: 'review b.ts', subagent_type: 'nobody' };
      seen.length = 0;
      const results = await tool.handle({ request, message });
      expect(results.get('toolu_02')).toEqual({ content: AGENT_PLACEHOLDER_RESULT, isError: false });
      expect(results.get('toolu_03')).toEqual({
        content: 'agent.subagent_type: unknown agent type "nobody" (known: reviewer)',
        isError: true,
      });
      await tool.idle();
      expect(seen).toEqual(['You review code.']);
      const summary = ledger.summary();
      expect(summary.agents).toMatchObject({ fresh: 1, fork: 0 });
      expect(summary.usage.cache_read_input_tokens).toBe(0);
      expect(ledger.totals('parent').subtree.requests).toBe(1); // the parent's totals include its fresh agent
      expect(tool.takeNotifications()).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });

  it('answers a spawn call it cannot start with an error result, naming the field', async () => {
    const engine = await ForkEngine.create({ baseURL: emulator.current.url, apiKey: 'test', workspace: workspace() });
    try {
      const tool = engine.agentTool();
      const turn = parentTurn('bad');
      (turn.message.content[1] as Anthropic.ToolUseBlockParam).input = { directive: 'x </fork-boilerplate>' };
      const results = await tool.handle(turn);
      expect(results.get('toolu_02')).toEqual({
        content: expect.stringMatching(/directives\[0\]: contains the <fork-boilerplate> tag/),
        isError: true,
      });
      expect(results.get('toolu_03')!.isError).toBe(true);
      expect(tool.fanOuts).toHaveLength(0);
    } finally {
      await engine.close();
    }
  });

  it('refuses inside a fork child, by query source and by the boilerplate in its messages', async () => {
    const engine = await ForkEngine.create({ baseURL: emulator.current.url, apiKey: 'test', workspace: workspace() });
    try {
      const tool = engine.agentTool();
      const turn = parentTurn('guard');
      const bySource = await tool.handle({ ...turn, querySource: FORK_QUERY_SOURCE });
      expect([...bySource.values()].every((r) => r.isError && /do this work directly/.test(r.content))).toBe(true);
      const rewritten = {
        ...turn.request,
        messages: [{ role: 'user' as const, content: wrapDirective('x') }, ...turn.request.messages.slice(1)],
      };
      const byTag = await tool.handle({ request: rewritten, message: turn.message });
      expect([...byTag.values()].every((r) => r.isError)).toBe(true);
      expect(tool.fanOuts).toHaveLength(0);
    } finally {
      await engine.close();
    }
  });

  it('without a parent request yet, forks on the fallback prompt (graceful degradation)', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 1 },
    });
    try {
      const tool = engine.agentTool({ model: 'claude-sonnet-4-6' });
      await tool.handle({ message: parentTurn('fallback').message });
      await tool.idle();
      expect(tool.fanOuts[0]!.prefix.snapshot.source).toBe('fallback');
      expect(
        (await tool.fanOuts[0]!.settled()).forks.every((f) => f.sharing === 'fallback' && f.status === 'completed'),
      ).toBe(true);
    } finally {
      await engine.close();
    }
  });
});

describe('foreground and background', () => {
  it('a foreground fork that finishes in time returns its result in the call, and is not notified', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 2 },
    });
    try {
      const tool = engine.agentTool({ foreground: true });
      const results = await tool.handle(parentTurn(`fg-${Date.now()}`));
      expect([...results.values()].map((r) => r.content.split('\n')[0])).toEqual([
        'Scope: rename parseThing to parseItem in src/a.ts',
        'Scope: rename parseThing to parseItem in src/b.ts',
      ]);
      await tool.idle();
      expect(tool.takeNotifications()).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  it('moves to the background after the auto-background delay, keeps running, and is notified once', async () => {
    const clock = new ManualClock(0);
    const emu = await startEmulator({ latency: 'realistic', clock });
    const engine = await ForkEngine.create({
      baseURL: emu.url,
      apiKey: 'test',
      workspace: workspace(),
      clock,
      pool: { maxThreads: 2 },
    });
    try {
      // When each fork ended, in emulated time: the forks must outlive the 50 ms delay. (Whether
      // they are still running when the tool's answer is seen depends on how far the driven clock
      // ran meanwhile, which a loaded machine changes.)
      const endedAt: number[] = [];
      const tool = engine.agentTool({
        foreground: true,
        autoBackgroundMs: 50,
        onFanOut: (fan) =>
          void (async () => {
            for await (const e of fan) if (e.type === 'fork-end') endedAt.push(e.at);
          })(),
      });
      const results = await driveClock(clock, tool.handle(parentTurn(`auto-${Date.now()}`)));
      expect([...results.values()].map((r) => r.content)).toEqual([FORK_PLACEHOLDER_RESULT, FORK_PLACEHOLDER_RESULT]);
      expect(tool.fanOuts[0]!.forks.map((f) => f.mode)).toEqual(['background', 'background']);
      await driveClock(clock, tool.idle());
      expect(tool.takeNotifications()).toHaveLength(2);
      expect((await tool.fanOuts[0]!.settled()).forks.every((f) => f.status === 'completed')).toBe(true);
      expect(endedAt).toHaveLength(2);
      expect(Math.min(...endedAt)).toBeGreaterThan(50);
    } finally {
      await engine.destroy(); // nothing may wait on a clock nobody drives any more
      await emu.close();
    }
  });

  it('handle.background() mid-run returns at once and loses no turn', async () => {
    const emu = await startEmulator({ latency: 'off', script: 'refactor' });
    const engine = await ForkEngine.create({
      baseURL: emu.url,
      apiKey: 'test',
      workspace: workspace({ 'src/a.ts': 'parseThing();\n', 'src/b.ts': 'parseThing();\n' }),
      pool: { maxThreads: 2 },
    });
    try {
      const tool = engine.agentTool({
        foreground: true,
        onFanOut: (fan) =>
          void (async () => {
            for await (const e of fan)
              if (e.type === 'turn-end' && e.turn === 1) fan.forks.find((f) => f.forkId === e.forkId)?.background();
          })(),
      });
      const results = await tool.handle(parentTurn(`move-${Date.now()}`));
      expect([...results.values()].map((r) => r.content)).toEqual([FORK_PLACEHOLDER_RESULT, FORK_PLACEHOLDER_RESULT]);
      await tool.idle();
      const { forks } = await tool.fanOuts[0]!.settled();
      expect(forks.map((f) => [f.status, f.turns])).toEqual([
        ['completed', 4],
        ['completed', 4],
      ]); // read, edit, re-read, report: nothing repeated
      expect(forks.map((f) => f.requests.map((r) => r.turn))).toEqual([
        [1, 2, 3, 4],
        [1, 2, 3, 4],
      ]);
      expect(tool.takeNotifications()).toHaveLength(2);
    } finally {
      await engine.close();
      await emu.close();
    }
  });
});
