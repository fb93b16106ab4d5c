// Issue 33: what a worktree's disk of its own (workspace-disk.ts) costs per fork: open and
// retire N worktrees of one repository with and without it, in one run (a ratio, not a time).
// Run: npx tsx bench/reliability/workspace-disk.ts [--forks 20] [--files 200]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostGit } from '../../src/core/tools/git/host-git.ts';
import { workspaceDiskSupport } from '../../src/core/tools/git/workspace-disk.ts';
import { openWorktree, retireWorktree } from '../../src/core/tools/git/worktree.ts';

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const forks = arg('forks', 20);
const files = arg('files', 200);

const support = workspaceDiskSupport();
if (!('ok' in support)) {
  console.log(JSON.stringify({ skipped: support.missing }));
  process.exit(0);
}

const repoDir = mkdtempSync(join(tmpdir(), 'fc-bench-disk-'));
for (let i = 0; i < files; i++) {
  mkdirSync(join(repoDir, `d${i % 10}`), { recursive: true });
  writeFileSync(join(repoDir, `d${i % 10}`, `f${i}.ts`), `export const v${i} = ${i};\n`.repeat(50));
}
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@b',
};
for (const args of [
  ['init', '-q', '-b', 'main'],
  ['add', '-A'],
  ['commit', '-qm', 'base'],
])
  execFileSync('git', ['-C', repoDir, ...args], { env });
const repo = await HostGit.open(repoDir, 'INVALID_OPTION');
const base = await repo.out(['rev-parse', 'HEAD']);

async function arm(name: string, disk: { maxMb: number } | undefined): Promise<number> {
  const root = join(mkdtempSync(join(tmpdir(), `fc-bench-disk-${name}-`)), 'fo001', 'worktrees');
  const t0 = performance.now();
  for (let i = 0; i < forks; i++) {
    const tree = await openWorktree(repo, { root, forkId: `fo001-f${i}`, base, workspace: repoDir, disk });
    await retireWorktree(repo, tree);
  }
  return (performance.now() - t0) / forks;
}

const plain = await arm('plain', undefined);
const withDisk = await arm('disk', { maxMb: 4096 });
console.log(
  JSON.stringify({
    forks,
    files,
    plain_ms_per_fork: Math.round(plain),
    disk_ms_per_fork: Math.round(withDisk),
    added_ms_per_fork: Math.round(withDisk - plain),
    ratio: Math.round((withDisk / plain) * 100) / 100,
  }),
);
