import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '../util/json-file.ts';
import { parseOrThrow } from '../util/validation.ts';

/*
 * The integration step's record in a run directory (`integration.json`): per repository, the
 * branch every integrable fork was merged into, the repository-wide check and how it ended,
 * and each fork's integration status. `status`, `merge` and the summary read it; a resume
 * that integrates again replaces it.
 */

const INTEGRATION_FILE = 'integration.json';

/**
 * The integration step's id in a run (its worktree `worktrees/<id>`, its branch
 * `forkcache/<id>`): `<fanOutId>-integration`, `<fanOutId>-<repo>-integration` per repository
 * of a plan over several.
 */
export function integrationIdOf(fanOutId: string, repoName?: string): string {
  return `${fanOutId}${repoName === undefined ? '' : `-${repoName}`}-integration`;
}

/** How a fork ended the integration step. */
const INTEGRATION_STATUSES = ['integrated', 'left_out'] as const;

const count = z.number().int().nonnegative();

const forkSchema = z.looseObject({
  fork_id: z.string(),
  status: z.enum(INTEGRATION_STATUSES),
  /** The fork's own end status (`completed`, `check_failed` under a local per-fork check …). */
  end_status: z.string(),
  /** Fix-up turns it was given. */
  fixups: count,
  /** left_out: why (the check's output implicated it, a conflict, the base fails the check). */
  why: z.string().optional(),
  /** left_out: the files of the fork the check's output named, and that output (its tail). */
  files: z.array(z.string()).optional(),
  output: z.string().optional(),
});

const repoSchema = z.looseObject({
  /** A plan over several repositories: the repository's name in it; null for a run in one. */
  repo: z.string().nullable(),
  command: z.string(),
  /** The commit the forks were merged onto (the repository's HEAD then). */
  from: z.string(),
  branch: z.string(),
  /** The integration branch's commit: `from` with every integrated fork; null when none is. */
  commit: z.string().nullable(),
  /** The check passed on `commit` (or on `from`, when no fork was integrated). */
  passed: z.boolean(),
  /**
   * Why the integration could not be done: the check cannot run (exit 126 or 127) or the base
   * fails it without any fork. Then no fork is integrated or left out (`forks` is empty: each
   * keeps its own end status). Null or absent: it was done.
   */
  blocked: z.string().nullable().optional(),
  check_runs: count,
  fixup_rounds: count,
  forks: z.array(forkSchema),
});

export const integrationSchema = z.looseObject({
  version: z.literal(1),
  repos: z.array(repoSchema),
  /** Fix-up turns' cost in USD (null: unpriced), and the fan-out's cost before them. */
  fixup_cost_usd: z.number().nullable(),
  fanout_cost_usd: z.number().nullable(),
  /**
   * A plan over several repositories whose `integrationCheck` map has no command for some of
   * them: those repositories, not integrated (their forks merge as a run without a check's do).
   * Older records: none.
   */
  not_integrated: z.array(z.strictObject({ repo: z.string(), why: z.string() })).default([]),
  /** The plan that redoes the left-out forks (`forkcache run` it); null when none was left out. */
  retry_plan: z.string().nullable(),
});

export type IntegrationRecord = z.output<typeof integrationSchema>;
export type RepoIntegration = z.output<typeof repoSchema>;
export type ForkIntegration = z.output<typeof forkSchema>;

/** The run's integration record; undefined when the run was never integrated. */
export function readIntegration(dir: string): IntegrationRecord | undefined {
  const path = join(dir, INTEGRATION_FILE);
  if (!existsSync(path)) return undefined;
  return parseOrThrow(integrationSchema, readJsonFile(path, 'integration record'), 'INVALID_RUN_DIR', path);
}

export function writeIntegration(dir: string, record: IntegrationRecord): void {
  writeFileSync(join(dir, INTEGRATION_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/** Each fork's integration status, by fork id, over every repository of the record. */
export function integrationStatuses(record: IntegrationRecord | undefined): Map<string, ForkIntegration> {
  return new Map((record?.repos ?? []).flatMap((r) => r.forks.map((f) => [f.fork_id, f] as const)));
}
