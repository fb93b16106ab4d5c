import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulator, rawPost } from './helpers.ts';

/*
 * The `claude-code` scripted model answers Claude Code's own requests (taken from the captures
 * in test/fixtures/clients/) with the steps that drive it: Agent fork calls, Read then Bash, and
 * a report from a fork child.
 */

interface Exchange {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}
const requests = (name: string): Exchange[] =>
  (
    JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/clients', `${name}.json`), 'utf8')) as {
      exchanges: Exchange[];
    }
  ).exchanges;

type Block = { type: string; name?: string; input?: Record<string, unknown>; text?: string };

async function answer(x: Exchange): Promise<Block[]> {
  const emu = await emulator({ script: 'claude-code' });
  const res = await rawPost(emu, x.url, JSON.stringify({ ...x.body, stream: false }), x.headers);
  expect(res.status).toBe(200);
  return ((await res.json()) as { content: Block[] }).content.filter((b) => b.type !== 'thinking');
}

describe('the claude-code scripted model', () => {
  it('fans out with one Agent fork call per directive, then summarises the hand-backs', async () => {
    const [parent, child, , after] = requests('cc-fork-fanout');
    const calls = (await answer(parent!)).filter((b) => b.type === 'tool_use');
    expect(calls.map((c) => [c.name, c.input?.['subagent_type'], c.input?.['prompt']])).toEqual([
      ['Agent', 'fork', 'read notes.txt'],
      ['Agent', 'fork', 'count the lines of notes.txt'],
    ]);
    const report = await answer(child!);
    expect(report).toEqual([
      { type: 'text', text: expect.stringContaining('done by the claude-code script as a fork child') },
    ]);
    expect((await answer(after!))[0]?.text).toContain('Result: 2 fork(s) finished');
  });

  it('reads, then runs the command, then reports both results', async () => {
    const [first, second, third] = requests('cc-first-party-read-bash');
    expect(await answer(first!)).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'Read', input: { file_path: 'notes.txt' } },
    ]);
    expect((await answer(second!))[0]).toMatchObject({
      type: 'tool_use',
      name: 'Bash',
      input: { command: 'wc -l notes.txt' },
    });
    expect((await answer(third!))[0]?.text).toMatch(/Result: Read: 1\tline one; Bash: 2 notes\.txt/);
  });

  it('loads a deferred MCP fork tool with ToolSearch, then calls it once with every directive', async () => {
    const [parent] = requests('cc-fork-fanout');
    // Claude Code names deferred MCP tools in its system turn after the first user turn.
    const [user, system, ...rest] = parent!.body['messages'] as { role: string; content: unknown[] }[];
    expect(system!.role).toBe('system');
    const list = { type: 'text', text: 'Deferred tools:\nmcp__forkcache__fork\nmcp__forkcache__fork_status' };
    const named = [user, { ...system, content: [...system!.content, list] }, ...rest];
    const first = { ...parent!, body: { ...parent!.body, messages: named } };
    const [search] = (await answer(first)).filter((b) => b.type === 'tool_use');
    expect([search?.name, search?.input]).toEqual(['ToolSearch', { query: 'select:mcp__forkcache__fork' }]);

    const tools = parent!.body['tools'] as { name: string }[];
    const loaded = {
      ...parent!,
      body: {
        ...parent!.body,
        tools: [...tools, { name: 'mcp__forkcache__fork', description: 'Fork', input_schema: { type: 'object' } }],
        messages: named,
      },
    };
    const [call] = (await answer(loaded)).filter((b) => b.type === 'tool_use');
    expect([call?.name, call?.input]).toEqual([
      'mcp__forkcache__fork',
      { directives: ['read notes.txt', 'count the lines of notes.txt'] },
    ]);
  });
});
