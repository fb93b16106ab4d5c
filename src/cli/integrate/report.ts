import type { IntegrationRecord } from '../../core/run-dir/integration.ts';
import { mergedExitCode, NOT_INTEGRATED_EXIT_CODE } from '../exit-codes.ts';

/**
 * Forks integrated and left out over every repository, whether every check passed, and
 * whether some repository's integration could not be done (its check cannot run, or the base fails it).
 */
export function integrationCounts(record: IntegrationRecord): {
  integrated: number;
  leftOut: number;
  passed: boolean;
  blocked: boolean;
} {
  const forks = record.repos.flatMap((r) => r.forks);
  return {
    integrated: forks.filter((f) => f.status === 'integrated').length,
    leftOut: forks.filter((f) => f.status === 'left_out').length,
    passed: record.repos.every((r) => r.passed),
    blocked: record.repos.some((r) => typeof r.blocked === 'string'),
  };
}

/** The exit code of a run (or resume) whose forks were integrated (exit-codes.ts). */
export function integrationExitCode(record: IntegrationRecord): number {
  const { integrated, leftOut, passed, blocked } = integrationCounts(record);
  if (blocked) return NOT_INTEGRATED_EXIT_CODE;
  return mergedExitCode({ merged: integrated, leftOut, passed });
}

/** The `integration` object of `--json`: counts, each repository's branch and check, each fork. */
export function integrationJson(record: IntegrationRecord): Record<string, unknown> {
  const { integrated, leftOut, passed, blocked } = integrationCounts(record);
  return {
    integrated,
    left_out: leftOut,
    passed,
    blocked,
    check_runs: record.repos.reduce((n, r) => n + r.check_runs, 0),
    fixup_rounds: record.repos.reduce((n, r) => n + r.fixup_rounds, 0),
    fixup_cost_usd: record.fixup_cost_usd,
    fanout_cost_usd: record.fanout_cost_usd,
    retry_plan: record.retry_plan,
    repos: record.repos,
    not_integrated: record.not_integrated,
  };
}

/**
 * A `--json` summary with the integration: `integration` (integrationJson), the counts among
 * `forks`, and each fork's `status` its integration status where it has one (its own end
 * status in `end_status`).
 */
export function withIntegration(json: Record<string, unknown>, record: IntegrationRecord): Record<string, unknown> {
  const byId = new Map(record.repos.flatMap((r) => r.forks.map((f) => [f.fork_id, f] as const)));
  const { integrated, leftOut } = integrationCounts(record);
  const forks = { ...(json['forks'] as Record<string, unknown>), integrated, left_out: leftOut };
  const results = (json['fork_results'] as Array<Record<string, unknown>>).map((f) => {
    const found = byId.get(String(f['fork_id']));
    return found ? { ...f, status: found.status, end_status: f['status'] } : f;
  });
  return { ...json, forks, fork_results: results, integration: integrationJson(record) };
}

/** What the text summary says after the table: each left-out fork, why, the output that implicated it, the retry plan. */
export function integrationLines(record: IntegrationRecord): string[] {
  const lines: string[] = [];
  for (const repo of record.repos) {
    const where = repo.repo ? ` (${repo.repo})` : '';
    const integrated = repo.forks.filter((f) => f.status === 'integrated').length;
    const out = repo.forks.filter((f) => f.status === 'left_out');
    if (typeof repo.blocked === 'string') {
      const [first = '', ...rest] = repo.blocked.split('\n').filter((l) => l.trim() !== '');
      lines.push(
        `integration${where}: NOT DONE, \`${repo.command}\`: ${first.slice(0, 200)}`,
        ...rest.slice(-5).map((l) => `    ${l.slice(0, 200)}`),
        `  no fork integrated or left out (each keeps its own status); once the check runs and passes on ${repo.from.slice(0, 10)}, \`forkcache merge\` of the run integrates again`,
      );
      continue;
    }
    lines.push(
      `integration${where}: ${integrated} integrated, ${out.length} left out; \`${repo.command}\` ${repo.passed ? 'passes' : 'FAILS'} on ${repo.branch}${repo.commit ? ` (${repo.commit.slice(0, 10)})` : ''}; ${repo.check_runs} check run(s), ${repo.fixup_rounds} fix-up round(s)`,
    );
    for (const fork of out) {
      lines.push(`  left_out ${fork.fork_id}: ${fork.why ?? ''}`);
      for (const line of (fork.output ?? '')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .slice(0, 5))
        lines.push(`    ${line.slice(0, 200)}`);
    }
  }
  for (const { repo, why } of record.not_integrated) lines.push(`integration (${repo}): not integrated, ${why}`);
  if (record.retry_plan)
    lines.push(`redo the left-out forks on the integrated tree with: forkcache run ${record.retry_plan}`);
  return lines;
}

/** The summary table's status of a fork: its integration status where it has one. */
export function integratedStatusOf(record: IntegrationRecord): (forkId: string, status: string) => string {
  const byId = new Map(record.repos.flatMap((r) => r.forks.map((f) => [f.fork_id, f.status] as const)));
  return (forkId, status) => byId.get(forkId) ?? status;
}
