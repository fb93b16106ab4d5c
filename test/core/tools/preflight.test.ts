import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../../../src/core/tools/declarations.ts';
import { detectToolSet } from '../../../src/core/tools/client-tools/registry.ts';
import { classifyParentTools, preflightTools } from '../../../src/core/tools/preflight.ts';
import { workspace } from '../engine/helpers.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const json = (path: string) => JSON.parse(readFileSync(join(FIXTURES, path), 'utf8')) as { body?: any; request?: any };
const CLAUDE = json('claude-code/2.1.332/fork-fanout/wire/04.json').body as {
  tools: { name: string }[];
  system: unknown;
};
const QWEN_ANTHROPIC = json('qwen-code/0.24.4/read/wire/02.json').body as { tools: { name: string }[] };
const QWEN_OPENAI = json('qwen-code-openai/01-main-turn.json').request.body as { tools: object[] };

describe('the tool set of a parent, from its declared array', () => {
  it("recognises Claude Code's, Qwen Code's (both wires) and forkcache's own", () => {
    expect(detectToolSet(CLAUDE.tools)).toBe('claude-code');
    expect(detectToolSet(QWEN_ANTHROPIC.tools)).toBe('qwen-code');
    expect(detectToolSet(QWEN_OPENAI.tools)).toBe('qwen-code');
    expect(detectToolSet(TOOL_DECLARATIONS)).toBe('forkcache');
  });

  it('classifies every tool of the recorded arrays: nothing is left unrunnable', () => {
    const claude = classifyParentTools(CLAUDE.tools, { hostToolNames: [], deny: [] });
    expect(claude).toEqual({
      toolSet: 'claude-code',
      host: [],
      run: ['Bash', 'Edit', 'Read', 'Write'],
      spawn: ['Agent'],
      refused: [
        'ListAgents',
        'ReportFindings',
        'ScheduleWakeup',
        'Skill',
        'ToolSearch',
        'Workflow',
        'DeferredToolPlaceholder',
      ],
      unrunnable: [],
    });
    for (const tools of [QWEN_ANTHROPIC.tools, QWEN_OPENAI.tools]) {
      const qwen = classifyParentTools(tools, { hostToolNames: [], deny: [] });
      expect(qwen.run).toEqual(['glob', 'grep_search', 'read_file', 'tool_call', 'tool_search']);
      expect(qwen.spawn).toEqual(['agent']);
      expect(qwen.unrunnable).toEqual([]);
    }
  });

  it('host tools win over every other meaning of a name; deny refuses on purpose', () => {
    const tools = [...CLAUDE.tools, { name: 'search_tickets' }, { name: 'query_db' }];
    const classified = classifyParentTools(tools, { hostToolNames: ['Read', 'search_tickets'], deny: ['query_db'] });
    expect(classified.host).toEqual(['Read', 'search_tickets']);
    expect(classified.run).not.toContain('Read');
    expect(classified.refused).toContain('query_db');
    expect(classified.unrunnable).toEqual([]);
  });

  it('names what no executor runs, in one line', () => {
    const refuse = (tools: object[]) => () => preflightTools(tools, { hostToolNames: [], deny: [] });
    expect(refuse([...CLAUDE.tools, { name: 'search_tickets' }])).toThrow(
      expect.objectContaining({
        code: 'TOOLS_UNRUNNABLE',
        message: 'the parent declares search_tickets, which no executor runs: pass a handler, or deny it',
      }),
    );
    expect(refuse([...CLAUDE.tools, { name: 'a' }, { name: 'b' }, { name: 'c' }])).toThrow(
      'the parent declares a, b and c, which no executor runs: pass handlers, or deny them',
    );
    // a forced set that does not fit the array leaves its tools unrunnable
    expect(() => preflightTools(CLAUDE.tools, { hostToolNames: [], deny: [], toolSet: 'forkcache' })).toThrow(
      /the parent declares Agent, Bash, .* which no executor runs/,
    );
  });
});

describe('the engine refuses an unrunnable parent before anything is sent', () => {
  it('fanOut throws TOOLS_UNRUNNABLE naming the tool; with denyTools it runs', async () => {
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
        system: [{ type: 'text', text: 'Primary working directory: /home/user/project' }],
        tools: [
          ...(CLAUDE.tools as never[]),
          { name: 'search_tickets', input_schema: { type: 'object', properties: {} } },
        ],
        messages: [{ role: 'user', content: 'hi' }],
      } as never);
      expect(() => engine.fanOut(parent, ['say hi'])).toThrow(
        expect.objectContaining({ code: 'TOOLS_UNRUNNABLE', message: expect.stringContaining('search_tickets') }),
      );
      expect(emu.stats().requests.total).toBe(0);
      const fan = engine.fanOut(parent, ['say hi'], { denyTools: ['search_tickets'] });
      const { forks } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['completed']);
    } finally {
      await engine.close();
      await emu.close();
    }
  });
});
