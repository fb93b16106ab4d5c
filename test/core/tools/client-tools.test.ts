import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutableToolName } from '../../../src/core/wire/tool-names.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOOL_SETS, READ_ONLY_CLIENT_TOOL_NAMES } from '../../../src/core/tools/client-tools/registry.ts';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

// The session's working directory as Claude Code states it (the recorded fixtures' own).
const CWD = '/home/user/project';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('notes.txt', 'line one\nline two\n');
  await sandbox.put('src/users.ts', 'export const fetchData = 1;\nexport const b = fetchData;\n');
  await sandbox.put('.git/config', '[core]\n');
});
afterEach(() => sandbox.cleanup());

const claude = (allow?: ExecutableToolName[]) =>
  executorIn(sandbox, { toolSet: 'claude-code', clientRoot: CWD, ...(allow ? { allow } : {}) });

describe("Claude Code's tools, run by forkcache's executors", () => {
  it('Read numbers lines as Claude Code does, for absolute paths in its working directory and relative ones', async () => {
    const tools = claude();
    // the shape of the recorded session's Read result (test/fixtures/clients/cc-first-party-read-bash.json)
    expect(okContent(await tools.execute('Read', { file_path: `${CWD}/notes.txt` }))).toBe(
      '1\tline one\n2\tline two\n3\t',
    );
    expect(okContent(await tools.execute('Read', { file_path: 'notes.txt', offset: 2, limit: 1 }))).toBe('2\tline two');
  });

  it('Edit, MultiEdit and Write change the files of the workspace, with Claude Code-shaped results', async () => {
    const tools = claude();
    const file = `${CWD}/src/users.ts`;
    expect(
      okContent(
        await tools.execute('Edit', {
          file_path: file,
          old_string: 'fetchData',
          new_string: 'loadData',
          replace_all: true,
        }),
      ),
    ).toBe(`The file ${file} has been updated. All occurrences were successfully replaced.`);
    expect(readFileSync(path.join(sandbox.workspace, 'src/users.ts'), 'utf8')).not.toContain('fetchData');
    await tools.execute('MultiEdit', {
      file_path: file,
      edits: [
        { old_string: 'export const b', new_string: 'export const c' },
        { old_string: 'export const c', new_string: 'export const d' },
      ],
    });
    expect(readFileSync(path.join(sandbox.workspace, 'src/users.ts'), 'utf8')).toContain('export const d = loadData');
    expect(okContent(await tools.execute('Write', { file_path: `${CWD}/new/a.md`, content: 'hi\n' }))).toBe(
      `File created successfully at: ${CWD}/new/a.md`,
    );
    expect(readFileSync(path.join(sandbox.workspace, 'new/a.md'), 'utf8')).toBe('hi\n');
  });

  it('a MultiEdit with one failing edit changes nothing', async () => {
    const tools = claude();
    const before = readFileSync(path.join(sandbox.workspace, 'src/users.ts'), 'utf8');
    const { code, content } = errorOf(
      await tools.execute('MultiEdit', {
        file_path: 'src/users.ts',
        edits: [
          { old_string: 'fetchData = 1', new_string: 'loadData = 1' },
          { old_string: 'not there', new_string: 'x' },
        ],
      }),
    );
    expect(code).toBe('TOOL_EDIT_FAILED');
    expect(content).toMatch(/^edit 2: old_string was not found/);
    expect(readFileSync(path.join(sandbox.workspace, 'src/users.ts'), 'utf8')).toBe(before);
  });

  it('refuses /etc/passwd, ../x and a path outside its working directory, as the jail does', async () => {
    const tools = claude();
    for (const file_path of [
      '/etc/passwd',
      '../outside/secret.txt',
      `${CWD}/../outside/secret.txt`,
      '/home/user/other/x',
    ]) {
      const { code, content } = errorOf(await tools.execute('Read', { file_path }));
      expect(code, file_path).toBe('TOOL_PATH_ESCAPE');
      expect(content).not.toContain('TOP SECRET');
    }
    expect(errorOf(await tools.execute('Read', { file_path: path.join(sandbox.outside, 'secret.txt') })).code).toBe(
      'TOOL_PATH_ESCAPE',
    );
  });

  it('refuses a Write or Edit into .git, through its working directory or not', async () => {
    const tools = claude();
    const write = await tools.execute('Write', { file_path: `${CWD}/.git/hooks/pre-commit`, content: '#!/bin/sh\n' });
    expect(errorOf(write).code).toBe('TOOL_PATH_PROTECTED');
    const edit = await tools.execute('Edit', { file_path: '.git/config', old_string: '[core]', new_string: '[x]' });
    expect(errorOf(edit).code).toBe('TOOL_PATH_PROTECTED');
    expect(readFileSync(path.join(sandbox.workspace, '.git/config'), 'utf8')).toBe('[core]\n');
  });

  it('allow speaks forkcache capabilities: Bash runs only when bash is allowed', async () => {
    const refused = errorOf(await claude().execute('Bash', { command: 'echo hi' }));
    expect(refused.code).toBe('TOOL_NOT_ALLOWED');
    expect(refused.content).toContain('(it needs bash)');
    expect(claude().isAllowed('Bash')).toBe(false);
    const tools = claude(['read_file', 'edit_file', 'bash']);
    expect(tools.isAllowed('Bash')).toBe(true);
    expect(tools.capabilityOf('Bash')).toBe('bash');
    expect(okContent(await tools.execute('Bash', { command: 'wc -l < notes.txt', description: 'count' })).trim()).toBe(
      '2',
    );
    // Write needs write_file, which this fork was not given
    expect(errorOf(await tools.execute('Write', { file_path: 'x', content: '' })).code).toBe('TOOL_NOT_ALLOWED');
  });

  it('checks inputs against the declared schema (additionalProperties: false)', async () => {
    const { code, content } = errorOf(await claude().execute('Read', { path: 'notes.txt' }));
    expect(code).toBe('TOOL_INPUT_INVALID');
    expect(content).toContain('file_path');
  });

  it('Grep and Glob answer with paths in the working directory', async () => {
    const tools = claude();
    expect(okContent(await tools.execute('Grep', { pattern: 'fetchData' }))).toBe(`Found 1 file\n${CWD}/src/users.ts`);
    expect(okContent(await tools.execute('Grep', { pattern: 'FETCHDATA', '-i': true, output_mode: 'count' }))).toBe(
      `${CWD}/src/users.ts:2`,
    );
    expect(okContent(await tools.execute('Glob', { pattern: '**/*.ts' }))).toBe(`${CWD}/src/users.ts`);
  });

  it('tools no fork runs answer with what to do instead; unknown tools name what the fork may use', async () => {
    const tools = claude();
    const wake = errorOf(await tools.execute('ScheduleWakeup', { delaySeconds: 60 }));
    expect(wake.code).toBe('TOOL_NOT_IN_FORK');
    expect(wake.content).toMatch(
      /^ScheduleWakeup is not available in a fork: .*Read, Edit.*This fork may use: Read, Write, Edit/,
    );
    expect(errorOf(await tools.execute('Agent', { prompt: 'x' })).code).toBe('TOOL_NOT_EXECUTABLE');
    expect(tools.isSpawnTool('Agent')).toBe(true);
    const unknown = errorOf(await tools.execute('read_file', { path: 'notes.txt' }));
    expect(unknown.code).toBe('TOOL_UNKNOWN');
    expect(unknown.content).toBe(
      'unknown tool "read_file"; this fork may use: Read, Write, Edit, MultiEdit, Grep, Glob, LS',
    );
  });

  it('denyTools refuses a tool the set would run', async () => {
    const tools = executorIn(sandbox, { toolSet: 'claude-code', clientRoot: CWD, deny: ['Write'] });
    const { code, content } = errorOf(await tools.execute('Write', { file_path: 'a', content: '' }));
    expect(code).toBe('TOOL_NOT_IN_FORK');
    expect(content).toContain('it is denied for this run');
  });
});

describe("Qwen Code's tools", () => {
  const qwen = () =>
    executorIn(sandbox, {
      toolSet: 'qwen-code',
      clientRoot: CWD,
      allow: ['read_file', 'edit_file', 'write_file', 'grep', 'glob', 'list_dir', 'bash'],
    });

  it('read_file takes an absolute file_path and a 0-based offset; edit and run_shell_command change and run', async () => {
    const tools = qwen();
    expect(okContent(await tools.execute('read_file', { file_path: `${CWD}/notes.txt`, offset: 1, limit: 1 }))).toBe(
      'line two\n',
    );
    expect(okContent(await tools.execute('read_file', { file_path: `${CWD}/notes.txt`, offset: null }))).toBe(
      'line one\nline two\n',
    );
    await tools.execute('edit', {
      file_path: `${CWD}/src/users.ts`,
      old_string: 'fetchData',
      new_string: 'loadData',
      replace_all: true,
    });
    expect(
      okContent(await tools.execute('run_shell_command', { command: 'grep -c loadData src/users.ts' })).trim(),
    ).toBe('2');
    const grep = okContent(await tools.execute('grep_search', { pattern: 'loadData' }));
    expect(grep).toContain('File: src/users.ts\nL1: export const loadData = 1;');
    expect(okContent(await tools.execute('read_many_files', { paths: ['notes.txt', 'src/*.ts'] }))).toContain(
      `--- ${CWD}/src/users.ts ---`,
    );
    expect(errorOf(await tools.execute('read_file', { file_path: '/etc/passwd' })).code).toBe('TOOL_PATH_ESCAPE');
    expect(errorOf(await tools.execute('update_goal', { status: 'complete', reason: 'x' })).code).toBe(
      'TOOL_NOT_IN_FORK',
    );
    expect(tools.isSpawnTool('agent')).toBe(true);
  });
});

describe('a refused path is shown as the model gave it', () => {
  // Issue 43: read_many_files on /etc/passwd answered `--- /home/user/project/etc/passwd ---`,
  // a file of the session that does not exist, instead of the path it refused.
  it('read_many_files names /etc/passwd and ../x as given, never under the session directory', async () => {
    const tools = executorIn(sandbox, { toolSet: 'qwen-code', clientRoot: CWD, allow: ['read_file'] });
    const out = okContent(
      await tools.execute('read_many_files', { paths: ['/etc/passwd', '../outside.txt', `${CWD}/notes.txt`] }),
    );
    expect(out).toMatch(/^--- \/etc\/passwd ---\n\[not read: .*outside the workspace/m);
    expect(out).toMatch(/^--- \.\.\/outside\.txt ---\n\[not read: /m);
    expect(out).toContain(`--- ${CWD}/notes.txt ---\nline one`);
    expect(out).not.toContain(`${CWD}/etc/passwd`);
    expect(out).not.toMatch(/root:/);
  });
});

describe('the tool sets', () => {
  it('no name only reads in one set and has effects in another (resume decides from the name)', () => {
    for (const set of Object.values(TOOL_SETS))
      for (const tool of set.tools.values())
        expect(READ_ONLY_CLIENT_TOOL_NAMES.has(tool.name), tool.name).toBe(tool.readOnly);
  });
});
