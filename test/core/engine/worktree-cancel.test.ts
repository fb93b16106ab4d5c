import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FanOut } from '../../../src/core/agent/fork-handle.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { git, repoWith } from '../tools/git-fixture.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

// Ctrl-C with worktree forks (issue 34: 8.5–18 s past the 3 s grace at 300 forks). The run
// waited for git work of forks that were cancelled anyway: each one's commit and worktree
// removal, and the `git worktree add` of every fork still queued for the repository's lock.
// Now a cancelled fork keeps its worktree as it is (resume goes on in it, `clean` removes it),
// and a fork queued for the lock when the cancel comes makes none. The cancel is sent from
// the emulator when the first request arrives: an event, no clock.

const FILES = Object.fromEntries(
  Array.from({ length: 8 }, (_, i) => [`f${i}.ts`, `export const v${i} = fetchData(${i});\n`]),
);
const DIRECTIVES = Object.keys(FILES).map((f) => `rename fetchData to loadData in ${f}`);

let onFirstRequest: (() => void) | undefined;
const emulator = sharedEmulator({
  script: 'refactor',
  faultFor: () => {
    const once = onFirstRequest;
    onFirstRequest = undefined;
    once?.();
    return undefined;
  },
});

const branches = (repo: string): string[] =>
  git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/forkcache/').split('\n').filter(Boolean);

describe('cancelling worktree forks', () => {
  it('does no git work for cancelled forks: their worktrees stay uncommitted, queued ones make none, resume finishes them', async () => {
    const repo = repoWith(FILES);
    const base = git(repo, 'rev-parse', 'HEAD');
    const runDir = workspace({});
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: repo,
      runDir,
      isolation: 'worktree',
      maxWorktrees: DIRECTIVES.length,
      concurrency: DIRECTIVES.length,
      pool: { maxThreads: 2 },
    });
    let atCancel: string[] = [];
    try {
      const fan: FanOut = engine.fanOut(bigSnapshot(`wt-cancel-${Date.now()}`), DIRECTIVES);
      const trees = join(runDir, fan.id, 'worktrees');
      onFirstRequest = () => {
        atCancel = existsSync(trees) ? readdirSync(trees) : [];
        fan.cancel();
      };
      const result = await fan.settled();
      expect(result.forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'cancelled'));
      // the fork whose request arrived had its worktree; it is still there, as it was
      expect(atCancel.length).toBeGreaterThan(0);
      const after = readdirSync(trees);
      for (const id of atCancel) expect(after).toContain(id);
      // at most the one creation under way at the cancel finished; none started after it
      expect(after.length).toBeLessThanOrEqual(atCancel.length + 1);
      expect(branches(repo).length).toBe(after.length);
      for (const branch of branches(repo)) expect(git(repo, 'rev-parse', branch)).toBe(base);

      const again = await engine.resume(join(runDir, fan.id)).settled();
      expect(again.forks.map((f) => f.status)).toEqual(DIRECTIVES.map(() => 'completed'));
      for (const f of again.forks) expect(git(repo, 'rev-parse', `${f.worktree!.branch}^`)).toBe(base);
      expect(readdirSync(trees)).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
