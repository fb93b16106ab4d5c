import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { errorOf, makeSandbox, okContent, roundsWhileSwapping, type Sandbox } from './helpers.ts';

// Issue 24, route 2: the run directory defaults to `.forkcache/runs` inside the workspace, and a
// fork rewrote its manifest there (bash allowed, sandbox none, workspace /) for `resume` to
// obey. No tool reaches the run directory, forkcache's state directory or any `.git`: not by
// name, not through `..`, a symlink or another letter case; walks (grep, glob) skip them.

const MANIFEST = '.forkcache/runs/fo001-abc/manifest.json';
const FORGED = JSON.stringify({ engine: { allow: ['bash'], sandbox: 'none', workspace: '/' } });

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put(MANIFEST, '{"fanoutId":"fo001-abc","secretMarker":"run-dir-content"}\n');
  await sandbox.put('.forkcache/runs/fo001-abc/forks/f1.jsonl', '{"type":"start","secretMarker":"run-dir-content"}\n');
  await sandbox.put('.git/config', '[core]\n\tsecretMarker = run-dir-content\n');
  await sandbox.put('sub/.git', 'gitdir: /elsewhere\n');
  await sandbox.put('src/a.ts', 'export const a = 1; // secretMarker\n');
  await sandbox.put('.forkcache/notes.txt', 'not protected\n');
});
afterEach(() => sandbox.cleanup());

const tools = () =>
  createToolExecutor({
    workspace: sandbox.workspace,
    allow: ['read_file', 'list_dir', 'grep', 'glob', 'write_file', 'edit_file'],
    protect: [path.join(sandbox.workspace, '.forkcache/runs')],
  });

describe('the tools never reach the run directory or .git, even inside the workspace', () => {
  it('refuses to write the manifest resume trusts, by every route to it', async () => {
    await symlink(path.join(sandbox.workspace, '.forkcache/runs'), path.join(sandbox.workspace, 'runs-link'));
    await mkdir(path.join(sandbox.workspace, 'deep'));
    const t = tools();
    for (const target of [
      MANIFEST,
      `./${MANIFEST}`,
      `deep/../${MANIFEST}`,
      path.join(sandbox.workspace, MANIFEST),
      'runs-link/fo001-abc/manifest.json',
      '.forkcache/runs/fo002-new/manifest.json', // a new run directory, too
    ]) {
      const write = errorOf(await t.execute('write_file', { path: target, content: FORGED }));
      expect(write.code, target).toBe('TOOL_PATH_PROTECTED');
      const edit = errorOf(await t.execute('edit_file', { path: target, old_string: 'fo001', new_string: 'x' }));
      expect(['TOOL_PATH_PROTECTED', 'TOOL_NOT_FOUND']).toContain(edit.code);
    }
    expect(await readFile(path.join(sandbox.workspace, MANIFEST), 'utf8')).toContain('"fanoutId":"fo001-abc"');
  });

  it('refuses to read or list it, and walks never show it', async () => {
    const t = tools();
    expect(errorOf(await t.execute('read_file', { path: MANIFEST })).code).toBe('TOOL_PATH_PROTECTED');
    expect(errorOf(await t.execute('list_dir', { path: '.forkcache/runs' })).code).toBe('TOOL_PATH_PROTECTED');
    expect(errorOf(await t.execute('grep', { pattern: 'x', path: '.forkcache/runs' })).code).toBe(
      'TOOL_PATH_PROTECTED',
    );
    // the whole workspace searched: only the source file matches, the run files are skipped
    expect(okContent(await t.execute('grep', { pattern: 'secretMarker' }))).toBe(
      'src/a.ts:1:export const a = 1; // secretMarker',
    );
    expect(okContent(await t.execute('glob', { pattern: '**/*.json*' }))).toBe('No files matched.');
    expect(okContent(await t.execute('glob', { pattern: '.forkcache/**' }))).toBe('.forkcache/notes.txt');
    expect(okContent(await t.execute('list_dir', { path: '.forkcache' }))).toBe('notes.txt');
    expect(okContent(await t.execute('list_dir', { path: '.' }))).toBe('.forkcache/\nsrc/\nsub/');
  });

  it('refuses .git at any depth and in any case (a worktree pointer file included)', async () => {
    const t = tools();
    for (const target of ['.git/config', '.GIT/config', 'sub/.git', 'src/../.git/hooks/pre-commit', '.git'])
      expect(errorOf(await t.execute('write_file', { path: target, content: 'x' })).code, target).toBe(
        'TOOL_PATH_PROTECTED',
      );
    expect(errorOf(await t.execute('read_file', { path: '.git/config' })).code).toBe('TOOL_PATH_PROTECTED');
    expect(okContent(await t.execute('list_dir', { path: 'sub' }))).toBe('(empty directory)');
    expect(await readFile(path.join(sandbox.workspace, 'sub/.git'), 'utf8')).toBe('gitdir: /elsewhere\n');
  });

  it("refuses every name git takes for .git, which git itself refuses to add (git's verify_path is the oracle)", async () => {
    const t = tools();
    const aliases = [
      '.git.',
      '.git ',
      '.GIT.',
      '.Git. . ',
      'git~1',
      'GIT~1',
      'git~1.',
      '.git:x',
      '.git::$INDEX_ALLOCATION',
      'a\\.git',
      'sub/.git.',
      '.git./config',
    ];
    const repo = await makeSandbox();
    try {
      execFileSync('git', ['init', '--quiet', repo.workspace]);
      for (const name of aliases) {
        expect(errorOf(await t.execute('write_file', { path: name, content: 'x' })).code, name).toBe(
          'TOOL_PATH_PROTECTED',
        );
        // the name is one git refuses: a fork that made it (by bash, say) would break its commit
        await repo.put(name, 'x');
        const added = spawnSync('git', ['-C', repo.workspace, 'add', '--', name.split('/')[0]!]);
        expect(added.status, name).not.toBe(0);
        rmSync(path.join(repo.workspace, name.split('/')[0]!), { recursive: true, force: true });
      }
    } finally {
      await repo.cleanup();
    }
    // HFS+ drops these code points: `.g\u200cit` is `.git` on a Mac (git refuses it there)
    for (const name of ['.g\u200cit', '.git\ufeff', '\u200e.git'])
      expect(errorOf(await t.execute('write_file', { path: name, content: 'x' })).code, name).toBe(
        'TOOL_PATH_PROTECTED',
      );
    // names that only look alike are the fork's own
    for (const name of ['.gitx', '.git.x', 'git~2', 'git~1x', '.gitignore', '.gitmodules', 'x.git'])
      okContent(await t.execute('write_file', { path: name, content: 'x' }));
  });

  it('keeps them out when a directory is swapped for a link to the run directory mid-call (fd-checked)', async () => {
    const target = path.join(sandbox.workspace, '.forkcache/runs/fo001-abc');
    await sandbox.put('.forkcache/runs/fo001-abc/file.txt', 'PROTECTED\n');
    await sandbox.put('sub/file.txt', 'INSIDE\n');
    const before = readdirSync(target).sort();
    const t = tools();
    const seen: string[] = [];
    await roundsWhileSwapping(
      sandbox.workspace,
      target,
      (round) =>
        Promise.all([
          ...Array.from({ length: 8 }, () =>
            t.execute('read_file', { path: 'sub/file.txt' }).then((r) => void (!r.isError && seen.push(r.content))),
          ),
          t
            .execute('grep', { pattern: 'SIDE|TECTED', path: 'sub' })
            .then((r) => void (!r.isError && seen.push(r.content))),
          t.execute('list_dir', { path: 'sub' }).then((r) => void (!r.isError && seen.push(r.content))),
          t.execute('write_file', { path: `sub/new-${round}.txt`, content: 'w' }),
        ]),
      { enough: () => seen.length >= 100 },
    );
    expect(seen.length).toBeGreaterThanOrEqual(100);
    expect(seen.filter((c) => /PROTECTED|manifest\.json|forks/.test(c))).toEqual([]);
    expect(readdirSync(target).sort()).toEqual(before);
  });

  it('lets a fork work in its own worktree, though the worktree lives in the run directory', async () => {
    const runs = path.join(sandbox.workspace, '.forkcache/runs');
    const tree = path.join(runs, 'fo001-abc/worktrees/f1');
    await mkdir(tree, { recursive: true });
    const t = createToolExecutor({ workspace: tree, allow: ['write_file', 'read_file'], protect: [runs] });
    okContent(await t.execute('write_file', { path: 'src/x.ts', content: 'ok' }));
    expect(okContent(await t.execute('read_file', { path: 'src/x.ts' }))).toBe('ok');
    // the fan-out's files are outside this workspace: refused as any outside path is
    expect(errorOf(await t.execute('read_file', { path: '../../manifest.json' })).code).toBe('TOOL_PATH_ESCAPE');
  });
});
