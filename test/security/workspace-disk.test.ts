import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createToolExecutor } from '../../src/core/tools/executor.ts';
import { HostGit } from '../../src/core/tools/git/host-git.ts';
import { findBubblewrap } from '../../src/core/tools/sandbox/bwrap-probe.ts';
import { describeSandbox } from '../../src/core/tools/sandbox/report.ts';
import { diskImageOf, isMountPoint, workspaceDiskSupport } from '../../src/core/tools/git/workspace-disk.ts';
import { discardWorktree, openWorktree, retireWorktree, type Worktree } from '../../src/core/tools/git/worktree.ts';
import { repoWith } from '../core/tools/git-fixture.ts';

// Issue 33 (low): a fork's workspace had a per-file bound (RLIMIT_FSIZE) and no total one: its
// bash could fill the host's disk with many files. Under `isolation: 'worktree'` each worktree
// now lives on a file system of its own (a sparse ext4 image, loop-mounted: root only), the
// checkout and `maxWorkspaceMb` more, and every route to the disk meets that bound: `dd`,
// `fallocate`, many small files, a file kept open after it was deleted, and write_file.

const MAX_MB = 8;
const MIB = 1024 * 1024;
const support = workspaceDiskSupport();
const disk = 'ok' in support;
const bwrap = findBubblewrap() !== undefined;
/** Skip, saying why, where no worktree can get a disk of its own (not root, no loop device…). */
const needDisk = (ctx: { skip: (note: string) => void }) => {
  if ('missing' in support) ctx.skip(`no worktree disk here: ${support.missing}`);
};

async function worktree(files: Record<string, string>): Promise<{ repo: HostGit; tree: Worktree }> {
  const dir = repoWith(files);
  const repo = await HostGit.open(dir, 'INVALID_OPTION');
  const base = await repo.out(['rev-parse', 'HEAD']);
  const root = join(mkdtempSync(join(tmpdir(), 'fc-disk-')), 'fo001', 'worktrees');
  const tree = await openWorktree(repo, { root, forkId: 'fo001-f00', base, workspace: dir, disk: { maxMb: MAX_MB } });
  return { repo, tree };
}

/** Bytes the image really takes on the host (it is sparse). */
const allocated = (file: string): number => statSync(file).blocks * 512;

describe(`a fork's worktree holds at most maxWorkspaceMb beyond its checkout`, () => {
  beforeEach(needDisk);
  it('bash in the sandbox: dd, fallocate, many small files and a deleted file kept open all end at ENOSPC', async (ctx) => {
    if (!bwrap) return ctx.skip('bubblewrap is not installed (Debian: bubblewrap)');
    const { repo, tree } = await worktree({ 'src/a.ts': 'export const a = 1;\n'.repeat(2000) });
    const image = diskImageOf(tree.path);
    try {
      expect(isMountPoint(tree.path)).toBe(true);
      const tools = createToolExecutor({
        workspace: tree.workspace,
        allow: ['bash', 'read_file'],
        sandbox: 'bwrap',
        limits: { bashTimeoutMs: 120_000 },
      });
      // the checkout is there, and about MAX_MB is free beside it
      expect((await tools.execute('read_file', { path: 'src/a.ts' })).content).toContain('export const a = 1;');
      const free = await tools.execute('bash', { command: 'df -B1 --output=avail . | tail -1' });
      expect(Number(free.content.trim())).toBeGreaterThanOrEqual(MAX_MB * MIB);
      expect(Number(free.content.trim())).toBeLessThan(2 * MAX_MB * MIB);

      const attempts = [
        'dd if=/dev/zero of=big bs=1M count=100',
        'fallocate -l 1G huge',
        // many small files: blocks (or inodes) run out, never the host's disk
        'mkdir many && i=0; while [ $i -lt 100000 ]; do printf %4096s x > many/f$i || exit 1; i=$((i+1)); done',
        // a file deleted while held open keeps its blocks: on this file system, not the host's
        'exec 3> held && rm held && dd if=/dev/zero bs=1M count=100 >&3',
        // a hard link cannot take the data elsewhere (/tmp is another file system)
        'head -c 1024 /dev/zero > /tmp/x && ln /tmp/x linked',
      ];
      for (const command of attempts) {
        const result = await tools.execute('bash', { command });
        expect(result.isError, `${command}: ${result.content}`).toBe(true);
        expect(result.content).toMatch(/No space left on device|Invalid cross-device link/);
        await tools.execute('bash', { command: 'rm -rf big huge many linked' });
      }
      // sparse: apparent size is not disk
      const sparse = await tools.execute('bash', { command: 'truncate -s 900M sparse && du -k sparse' });
      expect(sparse.isError, sparse.content).toBe(false);
      // whatever was written, the host holds at most the image's own size
      expect(allocated(image)).toBeLessThan(64 * MIB);
    } finally {
      await retireWorktree(repo, tree);
    }
    // retired: unmounted, its image gone
    expect(isMountPoint(tree.path)).toBe(false);
    expect(existsSync(image)).toBe(false);
    expect(existsSync(tree.path)).toBe(false);
  });

  it('write_file counts against the same bound and says the workspace is full', async () => {
    const { repo, tree } = await worktree({ 'README.md': 'hello\n' });
    try {
      const tools = createToolExecutor({ workspace: tree.workspace, allow: ['write_file'], sandbox: 'none' });
      const chunk = 'x'.repeat(MIB / 2);
      let written = 0;
      let failure: { content: string; code?: string } | undefined;
      for (let i = 0; i < 4 * MAX_MB && failure === undefined; i++) {
        const result = await tools.execute('write_file', { path: `out/f${i}.txt`, content: chunk });
        if (result.isError) failure = result;
        else written += chunk.length;
      }
      expect(failure, `wrote ${written} bytes without an error`).toBeDefined();
      expect(failure!.code).toBe('TOOL_IO_ERROR');
      expect(failure!.content).toMatch(/no space left: the workspace's disk is full.*maxWorkspaceMb/);
      expect(written).toBeGreaterThanOrEqual((MAX_MB - 1) * MIB);
      expect(written).toBeLessThan(2 * MAX_MB * MIB);
      // the failed write left no temp file behind
      const left = await createToolExecutor({ workspace: tree.workspace, allow: ['glob'] }).execute('glob', {
        pattern: 'out/.*forkcache-tmp',
      });
      expect(left.content).not.toMatch(/forkcache-tmp/);
    } finally {
      await retireWorktree(repo, tree);
    }
  });
});

describe('the disk goes with its worktree', () => {
  beforeEach(needDisk);
  it('a discarded worktree (a failed creation, a tampered one on resume) is unmounted and its image deleted', async () => {
    const { repo, tree } = await worktree({ 'a.txt': 'a\n' });
    const image = diskImageOf(tree.path);
    expect(isMountPoint(tree.path)).toBe(true);
    expect(existsSync(image)).toBe(true);
    await discardWorktree(repo, tree.path);
    expect(isMountPoint(tree.path)).toBe(false);
    expect(existsSync(image)).toBe(false);
    expect(existsSync(tree.path)).toBe(false);
  });
});

describe("the run's sandbox line", () => {
  beforeEach((ctx) => {
    if (!bwrap) ctx.skip('bubblewrap is not installed (Debian: bubblewrap)');
  });
  it('names the disk bound of a worktree run, or why it is missing', () => {
    const report = describeSandbox('bwrap', { isolation: 'worktree', limits: { maxWorkspaceMb: 256 } });
    if (disk) expect(report.applied).toContain('each worktree 256 MiB beyond its checkout (a disk of its own)');
    else expect(report.missing.join('\n')).toMatch(/a total disk bound per worktree \(/);
    // a shared workspace is your own directory: nothing is said of a disk there
    expect(JSON.stringify(describeSandbox('bwrap'))).not.toMatch(/beyond its checkout|disk bound/);
  });
});

describe('without root or loop devices', () => {
  beforeEach((ctx) => {
    if (disk) ctx.skip('worktrees get a disk of their own here (the tests above ran)');
  });
  it('says why no worktree gets a disk of its own', () => {
    expect('missing' in support && support.missing).toMatch(/root|loop|mkfs|mount/);
  });
});
