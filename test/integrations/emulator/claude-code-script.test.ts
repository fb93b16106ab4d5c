import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FORK_BOILERPLATE_CLOSE, FORK_BOILERPLATE_OPEN } from '../../../src/core/wire/fork-text.ts';
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
    JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/clients', `${name}.json`), 'utf8')) as {
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

/*
 * Qwen Code 0.24.4 defers its MCP tools too, but never loads them into the tool array: its
 * reminder names them, `tool_search` shows a schema, and `tool_call {name, arguments}` runs the
 * tool. Its recorded first request, asked to fork, with the fork tool named in that reminder.
 */
describe('the claude-code scripted model on Qwen Code’s requests', () => {
  const recorded = (
    JSON.parse(
      readFileSync(join(import.meta.dirname, '../../fixtures/qwen-code/0.24.4/read/wire/01.json'), 'utf8'),
    ) as {
      body: Record<string, unknown>;
    }
  ).body;
  type Message = { role: string; content: Record<string, unknown>[] };
  const [first] = recorded['messages'] as Message[];
  const user: Message = {
    role: 'user',
    content: first!.content.map((b) =>
      String(b['text']).includes('reachable through `tool_search`')
        ? {
            ...b,
            text: `${String(b['text'])}\n### forkcache (MCP)\n- "mcp__forkcache__fork": "Fork this conversation"`,
          }
        : b['text'] === 'read notes.txt'
          ? { ...b, text: 'fork 2 times: read notes.txt and report' }
          : b,
    ),
  };
  const turn = (messages: Message[]): Exchange => ({
    url: '/v1/messages',
    headers: {},
    // the assistant turns below are written by hand, without the thinking blocks it would need
    body: { ...recorded, thinking: undefined, messages },
  });
  const call = (id: string, name: string, input: Record<string, unknown>): Message => ({
    role: 'assistant',
    content: [{ type: 'tool_use', id, name, input }],
  });
  const result = (id: string, content: string): Message => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content }],
  });
  const arguments_ = { directives: ['read notes.txt and report (1/2)', 'read notes.txt and report (2/2)'] };

  it('reads the fork tool’s schema with tool_search, calls it through tool_call, then counts the reports', async () => {
    const [search] = (await answer(turn([user]))).filter((b) => b.type === 'tool_use');
    expect([search?.name, search?.input]).toEqual(['tool_search', { query: 'select:mcp__forkcache__fork' }]);

    const searched = [user, call('t1', 'tool_search', search!.input!), result('t1', '<functions>…</functions>')];
    const [bridge] = (await answer(turn(searched))).filter((b) => b.type === 'tool_use');
    expect([bridge?.name, bridge?.input]).toEqual([
      'tool_call',
      { name: 'mcp__forkcache__fork', arguments: arguments_ },
    ]);

    const reports = 'forkcache: 2 fork(s)\n\n## fork 1 (completed): a\nok\n\n## fork 2 (completed): b\nok';
    const back = [...searched, call('t2', 'tool_call', bridge!.input!), result('t2', reports)];
    expect((await answer(turn(back)))[0]?.text).toContain(
      'Result: 2 completed fork report(s) came back from mcp__forkcache__fork',
    );
  });

  it('has a fork child of that turn read the file with read_file, at the session’s absolute path', async () => {
    const parent = [user, call('t2', 'tool_call', { name: 'mcp__forkcache__fork', arguments: arguments_ })];
    const child: Message = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't2', content: 'Fork started' },
        {
          type: 'text',
          text: `${FORK_BOILERPLATE_OPEN}\nYou are a fork.\n${FORK_BOILERPLATE_CLOSE}\n\nDirective: read notes.txt and report (2/2)`,
        },
      ],
    };
    const [read] = (await answer(turn([...parent, child]))).filter((b) => b.type === 'tool_use');
    expect([read?.name, read?.input]).toEqual(['read_file', { file_path: '/home/user/project/notes.txt' }]);
    const done = [...parent, child, call('t3', 'read_file', read!.input!), result('t3', 'line one\nline two\n')];
    expect((await answer(turn(done)))[0]?.text).toContain('Result: notes.txt has 2 line(s)');
  });
});
