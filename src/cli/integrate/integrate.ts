import { ForkcacheError } from '../../core/util/errors.ts';
import type { LoopPrompt } from '../../core/loop/types.ts';
import { fixupPrompt } from '../../core/loop/prompts.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import {
  type ForkIntegration,
  type IntegrationRecord,
  type RepoIntegration,
  writeIntegration,
} from '../../core/run-dir/integration.ts';
import type { CheckResult } from '../../core/tools/checks/run.ts';
import { writeRetryPlan } from '../review/retry-plan.ts';
import { type ForkReview, readRunRepos, repoOfRun, type RunReview } from '../review/run-forks.ts';
import { bisect, implicatedForks, outputFor } from './attribute.ts';
import { IntegrationTree, type TreeMerge } from './integration-tree.ts';
import { commandFor, type IntegrationSettings } from '../integration-settings.ts';

/** Most characters of a check's output a left-out fork's record keeps (its end). */
const OUTPUT_KEPT = 4000;

interface IntegrateOptions {
  settings: IntegrationSettings;
  catalogue: ModelCatalogue;
  /**
   * Give each fork its fix-up turn (a resume of the run with only those forks) and wait for
   * them. Absent: no fix-ups (`merge` talks to no model).
   */
  fixup?: ((prompts: ReadonlyMap<string, LoopPrompt>) => Promise<void>) | undefined;
  log: (line: string) => void;
}

/** A fork the integration may merge: it has a commit, and it is done (or only its local check failed). */
function isCandidate(fork: ForkReview, settings: IntegrationSettings): boolean {
  if (typeof fork.commit !== 'string') return false;
  return fork.status === 'completed' || (settings.checkLocal && fork.status === 'check_failed');
}

/** The end of `text`, at most `max` characters, marked when cut. */
const tail = (text: string, max: number): string => (text.length <= max ? text : `…${text.slice(-max)}`);

const keep = (text: string): string => tail(text, OUTPUT_KEPT);

/** Most characters of the check's output a blocked integration quotes (its end). */
const BLOCKED_OUTPUT_KEPT = 600;

/**
 * Why a check failing without any fork blocks the integration: 126 and 127 are the shell's
 * "not executable" and "command not found" (the check cannot run); anything else, the base fails it.
 */
function blockedBy(result: CheckResult): string {
  const output = result.output.trim();
  const end = tail(output, BLOCKED_OUTPUT_KEPT);
  const what =
    result.exitCode === 126 || result.exitCode === 127
      ? `the check cannot run (exit ${result.exitCode})`
      : `the base fails the check without any fork (exit ${result.exitCode ?? 'none'})`;
  return end === '' ? what : `${what}: ${end}`;
}

const sum = (values: ReadonlyArray<number | null>): number | null =>
  values.some((v) => v === null) ? null : values.reduce<number>((n, v) => n + v!, 0);

/**
 * The integration step of a worktree run: for each repository, merge every fork that may be
 * merged into an integration branch in its own worktree, run the repository-wide check there;
 * while it fails, find the forks it points at (the files its output names, else a bisection
 * over the forks' merges), give each a fix-up turn that continues its own conversation (up to
 * `rounds` times), and then leave out what still breaks it. The result is the largest set of
 * forks whose merge passes, found greedily in plan order. Writes `integration.json` and, when
 * forks were left out, the retry plan.
 */
export async function integrate(dir: string, options: IntegrateOptions): Promise<IntegrationRecord> {
  const { settings, catalogue, log } = options;
  let views = await readRunRepos(dir, catalogue, { files: true });
  if (views[0]!.isolation !== 'worktree')
    throw new ForkcacheError(
      'INVALID_RUN_DIR',
      `integration: ${views[0]!.manifest.fanoutId} ran in a shared workspace: there are no branches to merge (isolation: worktree)`,
      { data: { field: 'integrationCheck' } },
    );
  const fanoutCost = sum(views.flatMap((v) => v.forks.map((f) => f.costUsd)));
  const repos: RepoIntegration[] = [];
  let fixupCost: number | null = 0;
  const leftOut: ForkReview[] = [];
  const notIntegrated: IntegrationRecord['not_integrated'] = [];
  for (let r = 0; r < views.length; r++) {
    const command = commandFor(settings, views[r]!.repo?.name);
    if (command === undefined) {
      // a map without this repository: nothing decides its forks, and the run says so
      const skipped = { repo: views[r]!.repo!.name, why: 'integrationCheck has no command for it' };
      notIntegrated.push(skipped);
      log(`integration of ${skipped.repo}: not integrated (${skipped.why})`);
      continue;
    }
    const step = new RepoStep(views[r]!, command, options, async (prompts) => {
      const costOf = (view: RunReview): number | null =>
        sum(view.forks.filter((f) => prompts.has(f.forkId)).map((f) => f.costUsd));
      const before = costOf(views[r]!);
      await options.fixup!(prompts);
      views = await readRunRepos(dir, catalogue, { files: true });
      const after = costOf(views[r]!);
      // what the fix-up turns cost: each fork's transcript, after less before
      fixupCost = fixupCost === null || before === null || after === null ? null : fixupCost + after - before;
      return views[r]!;
    });
    const record = await step.run();
    repos.push(record);
    const out = new Set(record.forks.filter((f) => f.status === 'left_out').map((f) => f.fork_id));
    leftOut.push(...views[r]!.forks.filter((f) => out.has(f.forkId)));
    const integrated = record.forks.filter((f) => f.status === 'integrated').length;
    if (typeof record.blocked === 'string')
      log(`integration${record.repo ? ` of ${record.repo}` : ''}: not done, ${record.blocked.split('\n')[0]}`);
    else
      log(
        `integration${record.repo ? ` of ${record.repo}` : ''}: ${integrated} fork(s) integrated, ${out.size} left out; \`${command}\` ${record.passed ? 'passed' : 'failed'} (${record.check_runs} check run(s), ${record.fixup_rounds} fix-up round(s)) on ${record.branch}`,
      );
  }
  const whole: RunReview = { ...views[0]!, forks: views.flatMap((v) => v.forks) };
  const retryPlan = leftOut.length > 0 ? writeRetryPlan(whole, leftOut) : null;
  const record: IntegrationRecord = {
    version: 1,
    repos,
    fixup_cost_usd: fixupCost,
    fanout_cost_usd: fanoutCost,
    not_integrated: notIntegrated,
    retry_plan: retryPlan,
  };
  writeIntegration(dir, record);
  return record;
}

/** The integration of one repository's forks. */
class RepoStep {
  readonly #command: string;
  readonly #options: IntegrateOptions;
  readonly #refresh: (prompts: ReadonlyMap<string, LoopPrompt>) => Promise<RunReview>;
  #view: RunReview;
  #checkRuns = 0;
  #rounds = 0;
  /** Why the integration could not be done (the check cannot run, or the base fails it); undefined: it was. */
  #blocked: string | undefined;
  #baseChecked = false;
  readonly #fixups = new Map<string, number>();
  readonly #out = new Map<string, Omit<ForkIntegration, 'fork_id' | 'status' | 'end_status' | 'fixups'>>();

  constructor(
    view: RunReview,
    command: string,
    options: IntegrateOptions,
    refresh: (prompts: ReadonlyMap<string, LoopPrompt>) => Promise<RunReview>,
  ) {
    this.#view = view;
    this.#command = command;
    this.#options = options;
    this.#refresh = refresh;
  }

  async run(): Promise<RepoIntegration> {
    const repo = await repoOfRun(this.#view);
    const from = await repo.out(['rev-parse', '--verify', 'HEAD^{commit}']);
    const tree = await IntegrationTree.open(repo, this.#view, from, this.#options.settings.checkDependencies);
    let passed = false;
    let final: TreeMerge | undefined;
    try {
      let set = this.#view.forks.filter((f) => isCandidate(f, this.#options.settings));
      for (;;) {
        const merge = await tree.merge(this.#view, set);
        for (const { fork, files } of merge.conflicts)
          this.#out.set(fork.forkId, { why: `conflicts with the forks before it in ${files.join(', ')}`, files });
        for (const { fork, paths } of merge.refused)
          this.#out.set(fork.forkId, {
            why: `brings a gitlink or a symlink leaving the repository: ${paths.join(', ')}`,
          });
        set = merge.merged;
        const result = await this.#check(tree);
        if (result.exitCode === 0) {
          passed = true;
          final = merge;
          break;
        }
        // a check that cannot run, or fails without any fork, says nothing about the forks
        this.#blocked = await this.#baseFails(tree, set, result);
        if (this.#blocked !== undefined) break;
        const implicated = await this.#attribute(tree, set, result);
        if (implicated === undefined) {
          this.#blocked = blockedBy(result);
          break;
        }
        if (this.#rounds < this.#options.settings.rounds && this.#options.fixup) {
          this.#rounds += 1;
          const prompts = new Map(
            implicated.map(({ fork, files }) => {
              this.#fixups.set(fork.forkId, (this.#fixups.get(fork.forkId) ?? 0) + 1);
              const output = outputFor(result.output, files);
              return [fork.forkId, fixupPrompt({ command: this.#command, exitCode: result.exitCode, output, files })];
            }),
          );
          this.#options.log(
            `integration: \`${this.#command}\` failed; fix-up round ${this.#rounds} for ${implicated.map((i) => i.fork.short).join(', ')}`,
          );
          this.#view = await this.#refresh(prompts);
          // the forks' new commits; a fork its fix-up left not done is no longer a candidate
          const ids = new Set(set.map((f) => f.forkId));
          set = this.#view.forks.filter((f) => ids.has(f.forkId) && isCandidate(f, this.#options.settings));
          for (const fork of this.#view.forks)
            if (ids.has(fork.forkId) && !set.includes(fork))
              this.#out.set(fork.forkId, { why: `its fix-up turn ended ${fork.status}`, output: keep(result.output) });
          continue;
        }
        const gone = new Set(implicated.map((i) => i.fork.forkId));
        for (const { fork, files } of implicated)
          this.#out.set(fork.forkId, {
            why: `\`${this.#command}\` fails with it merged${files.length > 0 ? ` (its output names ${files.join(', ')})` : ' (found by merging the forks one by one)'}`,
            files,
            output: keep(outputFor(result.output, files)),
          });
        set = set.filter((f) => !gone.has(f.forkId));
      }
      const commit = passed && final !== undefined && final.merged.length > 0 ? await tree.commit(final) : null;
      return this.#record(tree, commit, passed, final?.merged ?? []);
    } finally {
      await tree.close();
    }
  }

  async #check(tree: IntegrationTree): Promise<CheckResult> {
    this.#checkRuns += 1;
    return tree.check(this.#command, this.#options.settings.timeoutMs);
  }

  /**
   * Why the failed check says nothing about the forks: it fails on the base too (checked once,
   * with no fork merged); undefined when the base passes and the forks are to blame.
   */
  async #baseFails(
    tree: IntegrationTree,
    set: readonly ForkReview[],
    result: CheckResult,
  ): Promise<string | undefined> {
    if (set.length === 0) return blockedBy(result);
    if (this.#baseChecked) return undefined;
    this.#baseChecked = true;
    await tree.merge(this.#view, []);
    const base = await this.#check(tree);
    return base.exitCode === 0 ? undefined : blockedBy(base);
  }

  /** The forks the failed check points at: by the files it names, else by bisection; undefined: the base fails. */
  async #attribute(
    tree: IntegrationTree,
    set: readonly ForkReview[],
    result: CheckResult,
  ): Promise<Array<{ fork: ForkReview; files: string[] }> | undefined> {
    const named = implicatedForks(result.output, set);
    if (named.length > 0) return named;
    const found = await bisect(
      set,
      async (n) => {
        await tree.merge(this.#view, set.slice(0, n));
        return (await this.#check(tree)).exitCode !== 0;
      },
      this.#baseChecked, // #baseFails checked it, and it passed
    );
    return found === undefined ? undefined : [{ fork: found, files: [] }];
  }

  #record(
    tree: IntegrationTree,
    commit: string | null,
    passed: boolean,
    merged: readonly ForkReview[],
  ): RepoIntegration {
    const integrated = new Set(passed ? merged.map((f) => f.forkId) : []);
    const forks: ForkIntegration[] = [];
    // not integrated at all: each fork keeps its own end status
    if (this.#blocked === undefined)
      for (const fork of this.#view.forks) {
        const fixups = this.#fixups.get(fork.forkId) ?? 0;
        const base = { fork_id: fork.forkId, end_status: fork.status, fixups };
        if (integrated.has(fork.forkId)) forks.push({ ...base, status: 'integrated' });
        else if (this.#out.has(fork.forkId))
          forks.push({ ...base, status: 'left_out', ...this.#out.get(fork.forkId)! });
        // a fork with nothing to merge (no change) is done without integration
        else if (fork.status === 'no_change' || fork.commit === null) continue;
        else
          forks.push({
            ...base,
            status: 'left_out',
            why: isCandidate(fork, this.#options.settings)
              ? `\`${this.#command}\` did not pass with it merged`
              : `not integrable (${fork.status})`,
          });
      }
    return {
      repo: this.#view.repo?.name ?? null,
      command: this.#command,
      from: tree.from,
      branch: tree.branch,
      commit,
      passed,
      blocked: this.#blocked ?? null,
      check_runs: this.#checkRuns,
      fixup_rounds: this.#rounds,
      forks,
    };
  }
}
