import { describe, expect, it } from 'vitest';
import { HostGit } from '../../../src/core/tools/git/host-git.ts';
import { Permits, wholeWorktreeLimit } from '../../../src/core/tools/git/worktree-budget.ts';
import { git, repoWith } from './git-fixture.ts';

describe('the whole-worktree budget', () => {
  it('gives permits in order, takes them back once, and a wait ends when its fork is cancelled', async () => {
    const permits = new Permits(1);
    const first = await permits.acquire();
    const order: string[] = [];
    const cancel = new AbortController();
    const cancelled = permits.acquire(cancel.signal).then(
      () => order.push('cancelled one got it'),
      (err: Error) => order.push(`cancelled: ${err.message}`),
    );
    const second = permits.acquire().then((release) => (order.push('second'), release));
    cancel.abort(new Error('fork cancelled'));
    await cancelled;
    first();
    first(); // a second give-back does not make a permit out of nothing
    const release = await second;
    let third = false;
    const waiting = permits.acquire().then((r) => ((third = true), r));
    await Promise.resolve();
    expect(third).toBe(false);
    release();
    (await waiting)();
    expect(order).toEqual(['cancelled: fork cancelled', 'second']);
  });

  it('allows as many checkouts as fit in twice the repository, and at least one', async () => {
    const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`src/f${i}.ts`, 'x'.repeat(10_000)]));
    const repo = repoWith(files);
    const limit = await wholeWorktreeLimit(await HostGit.open(repo, 'INVALID_OPTION'), git(repo, 'rev-parse', 'HEAD'));
    // a checkout and a git dir of about the same size: 2 × (1 + about 1) checkouts
    expect(limit).toBeGreaterThanOrEqual(2);
    expect(limit).toBeLessThanOrEqual(4);
  });
});
