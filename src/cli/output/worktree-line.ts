import { openRepos, REPO_FIELD } from '../../core/engine/fan-out/repos.ts';
import { HostGit } from '../../core/tools/git/host-git.ts';
import { wholeWorktreeBudget } from '../../core/tools/git/worktree-budget.ts';

interface WholeWorktreesInput {
  workspace: string;
  /** The plan's `repos` (a plan over several repositories), else undefined. */
  repos?: readonly string[] | undefined;
  /** Each directive's fields (its `repo` in a plan over several repositories). */
  fields?: readonly Record<string, string>[] | undefined;
  /** The forks that get a whole worktree (with `sparseWorktrees`, those without a `file`). */
  forks: number;
  /** The plan's `limits.maxWorktrees`. */
  maxWorktrees?: number | undefined;
}

/**
 * The line a run with whole worktrees prints when their disk budget lets fewer of them exist
 * at once than there are forks: the forks then run that many at a time, and a user watching
 * 300 forks go three by three should know why and what changes it. Undefined when nothing waits.
 * The same computation as the fan-out's (`wholeWorktreeLimit` on HEAD, the base it records).
 */
export async function wholeWorktreesLine(input: WholeWorktreesInput): Promise<string | undefined> {
  const repos: [string | undefined, HostGit][] = input.repos
    ? [...(await openRepos(input.workspace, input.repos))]
    : [[undefined, await HostGit.open(input.workspace, 'INVALID_FLAG')]];
  const limited: string[] = [];
  for (const [name, repo] of repos) {
    const forks = name === undefined ? input.forks : (input.fields ?? []).filter((f) => f[REPO_FIELD] === name).length;
    const base = await repo.out(['rev-parse', '--verify', 'HEAD^{commit}']);
    const budget =
      input.maxWorktrees === undefined ? await wholeWorktreeBudget(repo, base) : { limit: input.maxWorktrees };
    if (budget.limit >= forks) continue;
    const size = 'repositoryBytes' in budget ? ` (${(budget.repositoryBytes / 2 ** 20).toFixed(1)} MB)` : '';
    limited.push(`${name === undefined ? '' : `${name}: `}${budget.limit} of ${forks} forks at a time${size}`);
  }
  if (limited.length === 0) return undefined;
  const why =
    input.maxWorktrees === undefined
      ? 'whole worktrees are made only while they take at most twice the repository beside it'
      : `"limits": {"maxWorktrees": ${input.maxWorktrees}} in the plan`;
  const change =
    input.maxWorktrees === undefined
      ? `"limits": {"maxWorktrees": N} allows more (more disk), "sparseWorktrees": true gives each fork only its file (no wait)`
      : 'raise it for more at once';
  return `worktrees: ${limited.join('; ')}: ${why}; ${change}`;
}
