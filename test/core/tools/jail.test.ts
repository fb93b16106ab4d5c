import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/core/util/errors.ts';
import { WorkspaceJail } from '../../../src/core/tools/jail/jail.ts';
import { isInside } from '../../../src/core/tools/jail/protected-paths.ts';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('inside.txt', 'inside\n');
  await sandbox.put('dir/nested.txt', 'nested\n');
});
afterEach(() => sandbox.cleanup());

async function refusal(
  jail: WorkspaceJail,
  input: string,
  mode: 'existing' | 'create' = 'existing',
): Promise<{ code: unknown; message: string }> {
  const err = await jail.resolve(input, mode).then(
    () => undefined,
    (e: unknown) => e as { code: unknown; message: string },
  );
  expect(err, `${input} should be refused`).toBeDefined();
  return err as { code: unknown; message: string };
}

describe('WorkspaceJail.resolve', () => {
  it('resolves paths inside the workspace against its realpath', async () => {
    const jail = new WorkspaceJail(sandbox.workspace);
    expect(jail.root).toBe(realpathSync(sandbox.workspace));
    const a = await jail.resolve('dir/nested.txt', 'existing');
    expect(a).toEqual({ real: path.join(jail.root, 'dir', 'nested.txt'), relative: 'dir/nested.txt', exists: true });
    expect((await jail.resolve('dir/../inside.txt', 'existing')).relative).toBe('inside.txt');
    expect((await jail.resolve('./dir/./', 'existing')).relative).toBe('dir');
    expect((await jail.resolve('.', 'existing')).relative).toBe('');
    expect((await jail.resolve(path.join(jail.root, 'inside.txt'), 'existing')).relative).toBe('inside.txt');
    expect(await jail.resolve('new/deep/file.txt', 'create')).toMatchObject({
      relative: 'new/deep/file.txt',
      exists: false,
    });
  });

  it.each([['../x'], ['..'], ['a/../../x'], ['dir/../../outside/secret.txt'], ['/etc/passwd'], ['/']])(
    'refuses %s as outside the workspace',
    async (input) => {
      const jail = new WorkspaceJail(sandbox.workspace);
      const err = await refusal(jail, input, 'create');
      expect(err.code).toBe('TOOL_PATH_ESCAPE');
      expect(err.message).toContain('outside the workspace');
    },
  );

  it('refuses a NUL byte in a path', async () => {
    const err = await refusal(new WorkspaceJail(sandbox.workspace), 'inside.txt\0.png');
    expect(err.code).toBe('TOOL_INPUT_INVALID');
    expect(err.message).toContain('NUL');
  });

  it('refuses symlinks whose target leaves the workspace, at any depth', async () => {
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workspace, 'leak.txt'));
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'out'));
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'dir', 'deep-out'));
    const jail = new WorkspaceJail(sandbox.workspace);
    for (const input of [
      'leak.txt',
      'out',
      'out/secret.txt',
      'dir/deep-out/secret.txt',
      'out/../inside.txt/../out/x',
    ]) {
      const err = await refusal(jail, input, 'create');
      expect(err.code, input).toBe('TOOL_PATH_ESCAPE');
    }
    // Not yet existing files below a symlinked directory, at any depth: the write case.
    for (const input of ['out/new.txt', 'out/a/b/c.txt', 'dir/deep-out/new.txt']) {
      expect((await refusal(jail, input, 'create')).code, input).toBe('TOOL_PATH_ESCAPE');
    }
  });

  it('follows symlinks that stay inside the workspace', async () => {
    await symlink(path.join(sandbox.workspace, 'dir'), path.join(sandbox.workspace, 'alias'));
    await symlink('inside.txt', path.join(sandbox.workspace, 'rel-link.txt'));
    const jail = new WorkspaceJail(sandbox.workspace);
    expect((await jail.resolve('alias/nested.txt', 'existing')).relative).toBe('dir/nested.txt');
    expect((await jail.resolve('rel-link.txt', 'existing')).relative).toBe('inside.txt');
    expect(await jail.resolve('alias/new.txt', 'create')).toMatchObject({ relative: 'dir/new.txt', exists: false });
  });

  it('resolves `link/..` as text, never letting the kernel climb out through the link', async () => {
    await symlink(path.join(sandbox.outside), path.join(sandbox.workspace, 'out'));
    await writeFile(path.join(sandbox.base, 'sibling.txt'), 'beside the workspace');
    const jail = new WorkspaceJail(sandbox.workspace);
    // The kernel would read <outside>/../sibling.txt; the jail means <workspace>/sibling.txt.
    const err = await refusal(jail, 'out/../sibling.txt');
    expect(err.code).toBe('TOOL_NOT_FOUND');
  });

  it('refuses dangling symlinks and symlink loops instead of writing through them', async () => {
    await symlink(path.join(sandbox.outside, 'not-yet.txt'), path.join(sandbox.workspace, 'dangling.txt'));
    await symlink(path.join(sandbox.outside, 'no-dir'), path.join(sandbox.workspace, 'dangling-dir'));
    await symlink('loop-b', path.join(sandbox.workspace, 'loop-a'));
    await symlink('loop-a', path.join(sandbox.workspace, 'loop-b'));
    const jail = new WorkspaceJail(sandbox.workspace);
    for (const input of ['dangling.txt', 'dangling-dir/x.txt', 'loop-a', 'loop-a/x']) {
      expect((await refusal(jail, input, 'create')).code, input).toBe('TOOL_PATH_ESCAPE');
    }
    expect(await readdir(sandbox.outside)).toEqual(['secret.txt']);
  });

  it('uses the realpath of a workspace reached through a symlink, and accepts absolute paths in either spelling', async () => {
    const alias = path.join(sandbox.base, 'ws-alias');
    await symlink(sandbox.workspace, alias);
    const jail = new WorkspaceJail(alias);
    expect(jail.root).toBe(realpathSync(sandbox.workspace));
    expect((await jail.resolve(path.join(alias, 'inside.txt'), 'existing')).real).toBe(
      path.join(jail.root, 'inside.txt'),
    );
    expect((await jail.resolve(path.join(jail.root, 'dir'), 'existing')).relative).toBe('dir');
    expect((await refusal(jail, path.join(alias, '..', 'outside', 'secret.txt'))).code).toBe('TOOL_PATH_ESCAPE');
  });

  it('reports a missing path in existing mode as not found, and a file used as a directory', async () => {
    const jail = new WorkspaceJail(sandbox.workspace);
    expect((await refusal(jail, 'missing/file.txt')).code).toBe('TOOL_NOT_FOUND');
    expect((await refusal(jail, 'inside.txt/child', 'create')).code).toBe('TOOL_NOT_FOUND');
  });

  it('throws TOOL_CONFIG_INVALID for a workspace that is missing or a file', () => {
    expect(() => new WorkspaceJail(path.join(sandbox.base, 'missing'))).toThrow(
      expect.objectContaining({ code: 'TOOL_CONFIG_INVALID' }),
    );
    const file = path.join(sandbox.outside, 'secret.txt');
    let thrown: unknown;
    try {
      new WorkspaceJail(file);
    } catch (err) {
      thrown = err;
    }
    expect(hasCode(thrown, 'TOOL_CONFIG_INVALID')).toBe(true);
  });

  it('isInside compares whole path segments', () => {
    expect(isInside('/a/ws', '/a/ws')).toBe(true);
    expect(isInside('/a/ws', '/a/ws/x')).toBe(true);
    expect(isInside('/a/ws', '/a/ws-evil/x')).toBe(false);
    expect(isInside('/a/ws', '/a/ws/..x')).toBe(true);
    expect(isInside('/a/ws', '/a')).toBe(false);
  });
});

describe('every tool goes through the jail', () => {
  beforeEach(async () => {
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.workspace, 'leak.txt'));
    await symlink(sandbox.outside, path.join(sandbox.workspace, 'out'));
  });

  const escapes: Array<[string, Record<string, unknown>]> = [
    ['read_file', { path: '../outside/secret.txt' }],
    ['read_file', { path: '/etc/passwd' }],
    ['read_file', { path: 'dir/../../outside/secret.txt' }],
    ['read_file', { path: 'leak.txt' }],
    ['read_file', { path: 'out/secret.txt' }],
    ['list_dir', { path: 'out' }],
    ['list_dir', { path: '..' }],
    ['grep', { pattern: 'SECRET', path: 'out' }],
    ['grep', { pattern: 'SECRET', path: '../outside' }],
    ['glob', { pattern: '../outside/*' }],
    ['glob', { pattern: '/etc/*' }],
    ['edit_file', { path: 'leak.txt', old_string: 'TOP', new_string: 'PWNED' }],
    ['edit_file', { path: 'out/secret.txt', old_string: 'TOP', new_string: 'PWNED' }],
    ['write_file', { path: '../outside/new.txt', content: 'x' }],
    ['write_file', { path: 'out/new.txt', content: 'x' }],
    ['write_file', { path: 'out/deeper/new.txt', content: 'x' }],
    ['write_file', { path: 'leak.txt', content: 'PWNED' }],
  ];

  it.each(escapes)('%s %j is refused and leaves the outside untouched', async (tool, input) => {
    const tools = executorIn(sandbox);
    const { code, content } = errorOf(await tools.execute(tool, input));
    expect(code).toBe('TOOL_PATH_ESCAPE');
    expect(content).toMatch(/outside the workspace|leaves the workspace/);
    expect(content).not.toContain('TOP SECRET');
    expect(await readdir(sandbox.outside)).toEqual(['secret.txt']);
    expect(await readFile(path.join(sandbox.outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it('refuses a NUL byte in a path with an error result naming it', async () => {
    const tools = executorIn(sandbox);
    for (const [tool, input] of [
      ['read_file', { path: 'inside.txt\0' }],
      ['write_file', { path: 'x\0y', content: '' }],
      ['glob', { pattern: '*\0' }],
    ] as const) {
      const { code, content } = errorOf(await tools.execute(tool, input));
      expect(code).toBe('TOOL_INPUT_INVALID');
      expect(content).toContain('NUL');
    }
  });

  it('lists, globs and greps symlinks without following them out', async () => {
    const tools = executorIn(sandbox);
    expect(okContent(await tools.execute('list_dir', { path: '.' })).split('\n')).toEqual([
      'dir/',
      'inside.txt',
      'leak.txt@',
      'out@',
    ]);
    const globbed = okContent(await tools.execute('glob', { pattern: '**/*' }));
    expect(globbed).not.toContain('secret');
    const grepped = okContent(await tools.execute('grep', { pattern: 'SECRET' }));
    expect(grepped).toBe('No matches.');
  });

  it('keeps working after a fresh directory is created inside (no stale state)', async () => {
    const tools = executorIn(sandbox);
    await mkdir(path.join(sandbox.workspace, 'later'));
    okContent(await tools.execute('write_file', { path: 'later/x.txt', content: 'x' }));
    expect(okContent(await tools.execute('read_file', { path: 'later/x.txt' }))).toBe('x');
  });
});
