import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import {
  DIRECTIVE_PREFIX,
  FORK_BOILERPLATE_CLOSE,
  FORK_BOILERPLATE_OPEN,
} from '../../../../src/core/wire/fork-text.ts';
import { chatClient, chatEmulator, part, usageOf, words } from './helpers.ts';

/*
 * The emulator's scripted models (written against Messages content blocks) drive a multi-turn,
 * tool-using conversation in Chat Completions format: assistant `tool_calls`, `tool` messages.
 */

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
const fn = (name: string, properties: Record<string, unknown>) => ({
  type: 'function' as const,
  function: { name, description: `${name} tool`, parameters: { type: 'object', properties } },
});
const TOOLS = [
  fn('read_file', { path: { type: 'string' } }),
  fn('edit_file', {
    path: { type: 'string' },
    old_string: { type: 'string' },
    new_string: { type: 'string' },
    replace_all: { type: 'boolean' },
  }),
  fn('write_file', { path: { type: 'string' }, content: { type: 'string' } }),
  fn('grep', { pattern: { type: 'string' }, path: { type: 'string' } }),
  fn('agent', { directive: { type: 'string' }, description: { type: 'string' } }),
];

/** A tiny in-memory workspace answering the tools the way forkcache's tools do. */
function workspace(files: Record<string, string>) {
  return (name: string, input: Record<string, any>): string => {
    if (name === 'read_file') return files[input['path']] ?? `Error: ${input['path']}: no such file`;
    if (name === 'edit_file') {
      const text = files[input['path']]!;
      files[input['path']] = input['replace_all']
        ? text.split(input['old_string']).join(input['new_string'])
        : text.replace(input['old_string'], input['new_string']);
      return `edited ${input['path']}`;
    }
    if (name === 'grep')
      return Object.entries(files)
        .flatMap(([path, text]) =>
          text
            .split('\n')
            .flatMap((line, i) => (new RegExp(input['pattern']).test(line) ? [`${path}:${i + 1}:${line}`] : [])),
        )
        .join('\n');
    return `Error: unknown tool ${name}`;
  };
}

describe('scripted models through the Chat Completions format', () => {
  it('a refactor fork child reads, edits, verifies and reports in tool_calls / tool messages, reading the cache as it goes', async () => {
    const api = chatClient(await chatEmulator('dashscope', { script: 'refactor' }), 'dashscope');
    const files = { 'src/a.ts': 'export function fetchData() {}\nfetchData();\n' };
    const run = workspace(files);
    const messages: Message[] = [
      { role: 'system', content: [part(words(2_000, 'sys'), true)] },
      {
        role: 'user',
        content: [
          part(
            `${FORK_BOILERPLATE_OPEN}rules${FORK_BOILERPLATE_CLOSE}\n${DIRECTIVE_PREFIX}rename fetchData to loadData in src/a.ts`,
            true,
          ),
        ],
      },
    ];
    const calls: string[] = [];
    const cached: number[] = [];
    for (let turn = 0; turn < 8; turn++) {
      const done = await api.chat.completions.create({ model: 'qwen3-max', messages, tools: TOOLS });
      cached.push(usageOf(done).prompt_tokens_details.cached_tokens);
      const message = done.choices[0]!.message;
      messages.push({
        role: 'assistant',
        content: message.content,
        ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}),
      });
      if (done.choices[0]!.finish_reason !== 'tool_calls') break;
      for (const call of message.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        calls.push(call.function.name);
        expect(call.id).toMatch(/^call_/);
        messages.push({
          role: 'tool',
          tool_call_id: call.id,
          content: run(call.function.name, JSON.parse(call.function.arguments)),
        });
      }
    }
    expect(calls).toEqual(['read_file', 'edit_file', 'read_file']);
    expect(files['src/a.ts']).toBe('export function loadData() {}\nloadData();\n');
    const report = messages.at(-1)!.content as string;
    expect(report).toMatch(/^Scope: rename fetchData to loadData in src\/a\.ts\nResult: renamed 2 occurrence\(s\)/);
    expect(report).toContain('Files changed: src/a.ts');
    // Each turn reads the system part's entry (the directive part is the second marker).
    expect(cached[0]).toBe(0);
    expect(cached.slice(1).every((n) => n >= 2_000)).toBe(true);
  });

  it('a refactor parent greps, then spawns one agent call per file in one assistant message (parallel tool_calls)', async () => {
    const api = chatClient(await chatEmulator('openai', { script: 'refactor' }));
    const run = workspace({
      'src/a.ts': 'fetchData();\n',
      'src/b.ts': 'const x = fetchData;\n',
      'src/c.ts': 'nothing\n',
    });
    const messages: Message[] = [{ role: 'user', content: 'rename fetchData to loadData across src' }];
    const first = await api.chat.completions.create({ model: 'gpt-5', messages, tools: TOOLS });
    const grep = first.choices[0]!.message.tool_calls![0]!;
    expect(grep.type === 'function' && grep.function.name).toBe('grep');
    messages.push({ role: 'assistant', content: null, tool_calls: [grep] });
    messages.push({
      role: 'tool',
      tool_call_id: grep.id,
      content: grep.type === 'function' ? run('grep', JSON.parse(grep.function.arguments)) : '',
    });
    const second = await api.chat.completions.create({ model: 'gpt-5', messages, tools: TOOLS, stream: true });
    const spawned = new Map<number, { name: string; args: string }>();
    for await (const chunk of second) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        const seen = spawned.get(delta.index) ?? { name: '', args: '' };
        spawned.set(delta.index, {
          name: seen.name + (delta.function?.name ?? ''),
          args: seen.args + (delta.function?.arguments ?? ''),
        });
      }
    }
    expect([...spawned.values()].map((c) => [c.name, JSON.parse(c.args).directive])).toEqual([
      ['agent', 'rename fetchData to loadData in src/a.ts'],
      ['agent', 'rename fetchData to loadData in src/b.ts'],
    ]);
  });

  it('sees a tool message starting "Error:" as a failed tool call', async () => {
    const api = chatClient(await chatEmulator('openai', { script: 'refactor' }));
    const messages: Message[] = [
      { role: 'user', content: 'read src/missing.ts and report' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/missing.ts"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Error: src/missing.ts: no such file' },
    ];
    const done = await api.chat.completions.create({ model: 'gpt-5', messages, tools: TOOLS });
    expect(done.choices[0]!.message.content).toMatch(
      /Result: not done[\s\S]*Issues: read_file failed: Error: src\/missing\.ts: no such file/,
    );
  });
});
