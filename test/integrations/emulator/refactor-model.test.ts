import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import {
  DIRECTIVE_PREFIX,
  FORK_BOILERPLATE_CLOSE,
  FORK_BOILERPLATE_OPEN,
  FORK_PLACEHOLDER_RESULT,
} from '../../../src/core/wire/fork-text.ts';
import { parseDirective } from '../../../src/integrations/emulator/scripts/directive.ts';
import { MODEL, client, emulator } from './helpers.ts';
import { TOOLS, agentLoop, finalText, type Files } from './workspace.ts';

const REFACTOR = { 'x-forkcache-script': 'refactor' };

/** A fork child's conversation: the parent's spawn call answered by the placeholder, then the wrapped directive. */
function forkChild(directive: string): Anthropic.MessageParam[] {
  return [
    { role: 'user', content: 'Please tidy the code base.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_parent_1', name: 'agent', input: { directive } }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_parent_1', content: FORK_PLACEHOLDER_RESULT },
        {
          type: 'text',
          text: `${FORK_BOILERPLATE_OPEN}\nYou are a fork. Rules…\n${FORK_BOILERPLATE_CLOSE}\n\n${DIRECTIVE_PREFIX}${directive}`,
        },
      ],
    },
  ];
}

describe('directive language', () => {
  it('parses the documented forms', () => {
    expect(parseDirective('rename foo to bar in src/a.ts')).toEqual({
      kind: 'rename-in',
      from: 'foo',
      to: 'bar',
      path: 'src/a.ts',
    });
    expect(parseDirective('Rename `foo` to `bar` across src.')).toEqual({
      kind: 'rename-across',
      from: 'foo',
      to: 'bar',
      dir: 'src',
    });
    expect(parseDirective('read README.md and report\nmore text')).toEqual({ kind: 'read', path: 'README.md' });
    expect(parseDirective('make it better')).toEqual({ kind: 'unknown', text: 'make it better' });
  });
});

describe('refactor model as a fork child', () => {
  it('renames word-safely: read, write, re-read, report', async () => {
    const api = client(await emulator());
    const files: Files = new Map([['src/a.ts', 'const foo = 1;\nexport { foo };\nconst foobar = 2;\n']]);
    const { message, calls } = await agentLoop(api, forkChild('rename foo to bar in src/a.ts'), files, REFACTOR);
    expect(calls).toEqual(['read_file', 'write_file', 'read_file']);
    expect(files.get('src/a.ts')).toBe('const bar = 1;\nexport { bar };\nconst foobar = 2;\n');
    const report = finalText(message);
    expect(report.split('\n').map((l) => l.split(':')[0])).toEqual([
      'Scope',
      'Result',
      'Key files',
      'Files changed',
      'Issues',
    ]);
    expect(report).toContain('Scope: rename foo to bar in src/a.ts');
    expect(report).toContain('renamed 2 occurrence(s)');
    expect(report).toContain('Files changed: src/a.ts');
    expect(report).toContain('Issues: none');
  });

  it('uses edit_file with replace_all when every occurrence is a whole identifier', async () => {
    const api = client(await emulator());
    const files: Files = new Map([['src/b.ts', 'let foo = foo + 1;\n']]);
    const { calls } = await agentLoop(api, forkChild('rename foo to qux in src/b.ts'), files, REFACTOR);
    expect(calls).toEqual(['read_file', 'edit_file', 'read_file']);
    expect(files.get('src/b.ts')).toBe('let qux = qux + 1;\n');
  });

  it('reports a failed tool as an issue', async () => {
    const api = client(await emulator());
    const { message, calls } = await agentLoop(
      api,
      forkChild('rename foo to bar in src/missing.ts'),
      new Map(),
      REFACTOR,
    );
    expect(calls).toEqual(['read_file']);
    expect(finalText(message)).toContain('Issues: read_file failed: src/missing.ts: no such file');
  });

  it('reads and reports', async () => {
    const api = client(await emulator());
    const files: Files = new Map([['README.md', '# Title\nline two\n']]);
    const { message, calls } = await agentLoop(api, forkChild('read README.md and report'), files, REFACTOR);
    expect(calls).toEqual(['read_file']);
    expect(finalText(message)).toContain('Result: README.md has 2 line(s) and 17 character(s); first line: "# Title"');
  });

  it('answers an unknown directive with a report naming the issue', async () => {
    const api = client(await emulator());
    const { message, calls } = await agentLoop(api, forkChild('make everything faster'), new Map(), REFACTOR);
    expect(calls).toEqual([]);
    expect(finalText(message)).toMatch(/^Scope: make everything faster\n[\s\S]*Issues: unknown directive$/);
  });

  it('gives deterministic tool_use ids: the same request gets the same ids', async () => {
    const api = client(await emulator());
    const ask = (directive: string) =>
      api.messages.create(
        { model: MODEL, max_tokens: 500, tools: TOOLS, messages: forkChild(directive) },
        { headers: REFACTOR },
      );
    const [a, b, c] = [
      await ask('read a.ts and report'),
      await ask('read a.ts and report'),
      await ask('read b.ts and report'),
    ];
    const id = (m: Anthropic.Message) => (m.content[0] as Anthropic.ToolUseBlock).id;
    expect(id(a)).toBe(id(b));
    expect(id(a)).not.toBe(id(c));
    expect(a.id).not.toBe(b.id);
  });
});

describe('refactor model as a parent', () => {
  it('greps, spawns one fork per file, then summarises as notifications arrive', async () => {
    const api = client(await emulator());
    const files: Files = new Map([
      ['src/a.ts', 'export const foo = 1;\n'],
      ['src/b.ts', 'import { foo } from "./a";\nfoo;\n'],
      ['src/c.ts', 'const food = 2;\n'],
      ['lib/d.ts', 'foo();\n'],
    ]);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'rename foo to bar across src' }];
    const { message, calls } = await agentLoop(api, messages, files, REFACTOR);
    expect(calls).toEqual(['grep', 'agent', 'agent']);
    const spawn = messages[3]!.content as Anthropic.ToolUseBlockParam[];
    expect(spawn.map((b) => b.input)).toEqual([
      { directive: 'rename foo to bar in src/a.ts', description: 'rename in a.ts' },
      { directive: 'rename foo to bar in src/b.ts', description: 'rename in b.ts' },
    ]);
    expect(finalText(message)).toBe(
      'Started 2 fork(s) to rename foo to bar across src: src/a.ts, src/b.ts. Waiting for their reports.',
    );
    messages.push({ role: 'user', content: '<task-notification>\n<status>completed</status>\n</task-notification>' });
    const one = await agentLoop(api, messages, files, REFACTOR);
    expect(finalText(one.message)).toContain('1 of 2 fork(s) reported back: 1 completed.');
    // a cancelled fork reported back too, but did nothing: the parent counts it as such
    messages.push({ role: 'user', content: '<task-notification>\n<status>cancelled</status>\n</task-notification>' });
    expect(finalText((await agentLoop(api, messages, files, REFACTOR)).message)).toContain(
      'All 2 fork(s) reported back: 1 completed, 1 cancelled.',
    );
  });

  it('does a one-file directive itself', async () => {
    const api = client(await emulator({ script: 'refactor' }));
    const files: Files = new Map([['x.ts', 'foo\n']]);
    const { calls } = await agentLoop(api, [{ role: 'user', content: 'rename foo to bar in x.ts' }], files, {});
    expect(calls).toEqual(['read_file', 'edit_file', 'read_file']);
    expect(files.get('x.ts')).toBe('bar\n');
  });
});

describe('run `<command>` and report', () => {
  it('parses the directive', () => {
    expect(parseDirective('run `echo hi` and report')).toEqual({ kind: 'run', command: 'echo hi' });
  });
});
