import type { FanOutResult } from '../../core/agent/fork-handle.ts';
import { FORK_END_STATUSES, isDoneStatus, isRetryableStatus } from '../../core/util/fork-status.ts';
import { resumeCommand } from './resume-hint.ts';
import { costUsd } from '../../core/ledger/cost.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import { existsSync } from 'node:fs';
import { sumUsage, type Usage } from '../../core/ledger/usage.ts';
import { readPasses, passesLabel } from '../../core/run-dir/passes.ts';
import { BASELINES_NOTE, savedAgainst } from '../../core/ledger/baseline-words.ts';
import { engineLines } from './engine-lines.ts';
import { fanOutSharedReads } from '../../core/ledger/summary.ts';

const n = (x: number): string => x.toLocaleString('en-US');
const usd = (x: number | null): string => (x === null ? 'n/a' : `$${x.toFixed(4)}`);
const percent = (x: number | null): string => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);

function requestsLine(
  c: {
    turns: number;
    failed_attempts: number;
    cut_off_attempts: number;
    unknown_outcome: number;
  },
  unrecorded: string,
): string {
  const retried = c.failed_attempts - c.cut_off_attempts;
  const extra = [
    retried > 0 ? `${n(retried)} failed attempt(s) billed and retried (in the totals)` : '',
    c.cut_off_attempts > 0
      ? `${n(c.cut_off_attempts)} billed and cut off by the stop, not retried (in the totals)`
      : '',
    c.unknown_outcome > 0
      ? `${n(c.unknown_outcome)} billed, unrecorded: in flight at a crash, estimated as the request each fork sent again for that turn at ${unrecorded} (not in the totals)`
      : '',
  ].filter((x) => x !== '');
  return `requests ${n(c.turns)} turn(s)${extra.length > 0 ? ` + ${extra.join(' + ')}` : ''}`;
}

// A fixed-width table is a dozen lines; a table library would add a dependency for no gain.
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '))
    .join('\n');
}

/** The status a fork shows: an integrated run's `integrated` / `left_out` where it has one. */
type StatusOf = (forkId: string, status: string) => string;

/**
 * The ledger of a fan-out as a table plus the cache and cost lines, for the terminal.
 * `forkRows: false` leaves out the per-fork rows (the live board printed each already).
 */
export function formatFanOutResult(
  result: FanOutResult,
  model: string,
  catalogue?: ModelCatalogue,
  /** `statusOf`: the status a fork's row shows (an integrated run's `integrated` / `left_out`). */
  options: { forkRows?: boolean; statusOf?: StatusOf } = {},
): string {
  const rows = [['fork', 'status', 'turns', 'tools', 'cache read', 'written', 'uncached', 'output', 'cost']];
  for (const fork of options.forkRows === false ? [] : result.forks) {
    const usage = sumUsage(fork.requests.map((r) => r.usage));
    // Priced request by request: each has its own date (price row) and prompt length (band).
    const costs = fork.requests.map(
      (r) => costUsd(r.usage, model, { at: r.sentAt, ...(catalogue ? { catalogue } : {}) })?.total ?? null,
    );
    const cost = costs.includes(null) ? null : (costs as number[]).reduce((a, b) => a + b, 0);
    rows.push([
      fork.forkId,
      options.statusOf?.(fork.forkId, fork.status) ?? fork.status,
      String(fork.turns),
      String(fork.toolCalls),
      n(usage.cache_read_input_tokens),
      n(usage.cache_creation_input_tokens),
      n(usage.input_tokens),
      n(usage.output_tokens),
      usd(cost),
    ]);
  }
  const s = result.summary;
  const problems = problemLines(result, options.statusOf);
  const unchanged = noChangeLine(result);
  const leftOut = leftOutLine(result);
  rows.push([
    'tree total',
    '',
    '',
    '',
    n(s.usage.cache_read_input_tokens),
    n(s.usage.cache_creation_input_tokens),
    n(s.usage.input_tokens),
    n(s.usage.output_tokens),
    usd(s.cost_usd.actual),
  ]);
  return [
    table(rows),
    `tree total: ${totalCovers(result)}`,
    '',
    `cache   fan-out hit ratio ${percent(s.cache.fanout_hit_ratio)} (each fork's first request), all fork requests ${percent(allRequestsHit(sumUsage(result.forks.flatMap((f) => f.requests.map((r) => r.usage)))))}, cache efficiency ${s.cache.cache_efficiency.toFixed(3)} (read ${n(fanOutSharedReads(s.cache))} of at most ${n(s.cache.max_fanout_reads)}), warm-ups ${s.warmups}`,
    `cost    actual ${usd(s.cost_usd.actual)} | no cache ${usd(s.cost_usd.no_cache)} (${savedAgainst(s.savings.vs_no_cache)}) | fresh agents ${usd(s.cost_usd.fresh_agents)} (${savedAgainst(s.savings.vs_fresh_agents)})`,
    `        ${BASELINES_NOTE}`,
    ...engineLines(s),
    ...s.warnings.map((w) => `model   ${w}`),
    requestsLine(attemptCounts(result), unrecordedWords(result, model, catalogue)),
    ...(unchanged ? [unchanged] : []),
    ...(leftOut ? [leftOut] : []),
    ...(problems.length > 0 ? ['', ...problems] : []),
    `prefix  ${s.prefix.sha256.slice(0, 16)}  ${n(s.prefix.bytes)} bytes, ${s.prefix.shared_tokens === null ? 'n/a' : n(s.prefix.shared_tokens)} tokens shared, drift events ${s.prefix.drift_events}${s.prefix.source === 'fallback' ? ' (no parent snapshot: fallback prompt, nothing shared with a parent)' : ''}`,
  ].join('\n');
}

/** Cache reads over all input of every request of the forks (what the board's "all fork requests" shows). */
function allRequestsHit(u: Usage): number | null {
  const total = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  return total === 0 ? null : u.cache_read_input_tokens / total;
}

/**
 * What the tree total covers: the forks, the passes of the fan-out it sums (a resumed run's
 * ledger carries every earlier pass's turns), and whether the parent's own requests are in it.
 */
function totalCovers(result: FanOutResult): string {
  const s = result.summary;
  const c = attemptCounts(result);
  // the engine's warm-ups (a resume's prefix write, a llama probe) are billed but not the parent's
  const warmups = s.warmup_requests ?? 0;
  const parent = s.requests - c.turns - c.failed_attempts - warmups;
  const passes = s.run_dir && existsSync(s.run_dir) ? readPasses(s.run_dir).length : 1;
  const parentPart = parent > 0 ? `the parent's ${n(parent)} request(s) included` : 'parent not included';
  const warmPart = warmups > 0 ? `, ${n(warmups)} warm-up request(s) included` : '';
  return `${n(result.forks.length)} forks, ${passesLabel(passes)}, ${parentPart}${warmPart}`;
}

/**
 * Requests in flight when a process died (written ahead in the transcript, never answered):
 * the endpoint may have billed them, the ledger could not record them. Each is estimated as its
 * twin, the request its fork sent again for the same turn on resume (the same bytes, so the
 * same input; its output as a stand-in), or, when the fork never sent that turn again, the
 * fork's last request before it (a lower bound). An estimate, not in any total.
 */
function unrecordedEstimate(result: FanOutResult): { requests: number; estimated_usage: Usage } {
  const twins: Usage[] = [];
  for (const fork of result.forks)
    for (const turn of fork.unknownTurns ?? []) {
      const twin = fork.requests.find((r) => r.turn === turn) ?? fork.requests.filter((r) => r.turn < turn).at(-1);
      if (twin) twins.push(twin.usage);
    }
  return {
    requests: result.forks.reduce((sum, f) => sum + (f.unknownOutcome ?? 0), 0),
    estimated_usage: sumUsage(twins),
  };
}

function unrecordedWords(result: FanOutResult, model: string, catalogue: ModelCatalogue | undefined): string {
  const { estimated_usage: u } = unrecordedEstimate(result);
  const input = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  const cost = costUsd(u, model, catalogue ? { catalogue } : {})?.total;
  return `≈${n(input)} input and ≈${n(u.output_tokens)} output tokens${cost === undefined ? '' : `, ≈${usd(cost)}`}`;
}

/**
 * Requests the forks sent: one per turn, plus billed attempts that failed (`cut_off_attempts` of
 * them were the last of a fork that then stopped — cancelled, capped, failed — and were never
 * retried), plus unknown ones (in flight at a crash).
 */
export function attemptCounts(result: FanOutResult): {
  turns: number;
  failed_attempts: number;
  cut_off_attempts: number;
  unknown_outcome: number;
} {
  const sum = (f: (x: FanOutResult['forks'][number]) => number): number => result.forks.reduce((n, x) => n + f(x), 0);
  // a failed attempt after the fork's last answered turn was not retried: the fork stopped there
  const cutOff = (f: FanOutResult['forks'][number]): number => {
    if (f.status !== 'cancelled' && f.status !== 'capped' && f.status !== 'failed') return 0;
    const last = Math.max(0, ...f.requests.map((r) => r.turn));
    return (f.failedAttempts ?? []).filter((a) => a.turn > last).length;
  };
  return {
    turns: sum((f) => f.requests.length),
    failed_attempts: sum((f) => f.failedAttempts?.length ?? 0),
    cut_off_attempts: sum(cutOff),
    unknown_outcome: sum((f) => f.unknownOutcome ?? 0),
  };
}

/** `requests.billed_unrecorded` of the JSON summary: the count (= `unknown_outcome`) and the estimate's tokens. */
function unrecordedJson(result: FanOutResult): Record<string, number> {
  const { requests, estimated_usage: u } = unrecordedEstimate(result);
  return {
    requests,
    estimated_input_tokens: u.input_tokens,
    estimated_cache_creation_input_tokens: u.cache_creation_input_tokens,
    estimated_cache_read_input_tokens: u.cache_read_input_tokens,
    estimated_output_tokens: u.output_tokens,
  };
}

/** Edits a fork meant to make and could not (`fork path (code)`), in fork order. */
export function editsNotApplied(result: FanOutResult): { fork: string; path: string; code: string }[] {
  return result.forks.flatMap((f) => (f.editsNotApplied ?? []).map((e) => ({ fork: f.forkId, ...e })));
}

/**
 * The forks that are not done, in fork order: not `completed`, and not `no_change` either when
 * the run required a change; every fork when all of them changed nothing (the run did nothing).
 */
export function notDoneForks(result: FanOutResult, statusOf?: StatusOf): FanOutResult['forks'] {
  const statuses = result.forks.map((f) => f.status);
  if (statuses.length > 0 && statuses.every((s) => s === 'no_change')) return result.forks;
  return result.forks.filter(
    (f) =>
      // an integrated fork is done: its per-fork check was advisory (checkLocal), the integration check passed
      statusOf?.(f.forkId, f.status) !== 'integrated' &&
      !isDoneStatus(f.status, result.summary?.require_change === true),
  );
}

/**
 * The forks that changed no file, as one line (`no_change` forks: a rename of a name that is in
 * no file, a directive already carried out); undefined when every fork changed something.
 */
function noChangeLine(result: FanOutResult): string | undefined {
  const none = result.forks.filter((f) => f.status === 'no_change').length;
  if (none === 0) return undefined;
  const how =
    none === result.forks.length
      ? 'every fork: the run did nothing (is the name in the directive right?)'
      : result.summary?.require_change === true
        ? 'not done: the plan requires a change (requireChange)'
        : 'done, by the plan (requireChange: true makes them not done)';
  return `changed no file  ${n(none)} of ${n(result.forks.length)} fork(s) (no_change), ${how}`;
}

/**
 * What the commits of the forks' worktrees left out, as one line: what the plan's check created
 * (`__pycache__/`, `target/`) is no fork's work. Undefined when nothing was left out.
 */
function leftOutLine(result: FanOutResult): string | undefined {
  const forks = result.forks.filter((f) => (f.worktree?.leftOut?.length ?? 0) > 0);
  if (forks.length === 0) return undefined;
  const paths = forks.flatMap((f) => f.worktree!.leftOut!);
  const names = [...new Set(paths.map((p) => p.slice(p.lastIndexOf('/', p.length - 2) + 1)))];
  const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
  return `left out  ${n(paths.length)} path(s) the check wrote, in ${n(forks.length)} fork(s)' commits (${shown}); --json lists them`;
}

/** What a fork was for, in a few words: its file when the plan names one, else its directive's first line. */
function forkTarget(fork: FanOutResult['forks'][number]): string {
  const file = fork.fields?.['file'];
  if (file !== undefined) return `file ${file}`;
  const line = (fork.directive.split('\n').find((l) => l.trim() !== '') ?? '').trim();
  return `directive "${line.length > 100 ? `${line.slice(0, 99)}…` : line}"`;
}

/** Past this many forks not done, they are counted by status, not listed one by one. */
const LISTED_FORKS = 20;

const reasonOf = (f: FanOutResult['forks'][number]): string =>
  f.error ? `${f.error.code}: ${f.error.message}` : 'no reason recorded';

/** A fork's id as `status` shows it (`f03`). */
const shortId = (forkId: string): string => forkId.slice(forkId.lastIndexOf('-') + 1);

/**
 * Forks not done, by status, one line each: how many, the first few ids, and the most common
 * reason; then where the full list is. What a run of hundreds of forks ends with.
 */
function groupedLines(forks: FanOutResult['forks'], runDir: string | undefined): string[] {
  const lines: string[] = [];
  for (const status of [...FORK_END_STATUSES, 'unknown']) {
    const group = forks.filter((f) => (f.status as string) === status);
    if (group.length === 0) continue;
    const reasons = new Map<string, number>();
    for (const f of group) reasons.set(reasonOf(f), (reasons.get(reasonOf(f)) ?? 0) + 1);
    const [reason, count] = [...reasons].sort((a, b) => b[1] - a[1])[0]!;
    const ids = group.slice(0, 3).map((f) => shortId(f.forkId));
    const more = group.length > ids.length ? `, … ${n(group.length - ids.length)} more` : '';
    const most = reasons.size === 1 ? reason : `${reason} (${n(count)} of them)`;
    lines.push(`${status}  ${n(group.length)} fork(s) (${ids.join(', ')}${more}): ${most}`);
  }
  if (runDir !== undefined) lines.push(`each fork: forkcache status ${runDir}`);
  return lines;
}

/**
 * What went wrong, for the terminal: every fork that is not done with its status, reason (a
 * 401, a report saying not done, a failed check…) and what it was for, and every edit that was
 * not applied; past `LISTED_FORKS`, the forks counted by status and where the full list is.
 * Empty when all went well.
 */
export function problemLines(result: FanOutResult, statusOf?: StatusOf): string[] {
  const forks = notDoneForks(result, statusOf);
  const lines =
    forks.length > LISTED_FORKS
      ? groupedLines(forks, result.summary?.run_dir)
      : forks.map((f) => `${f.status}  ${f.forkId}: ${reasonOf(f)} (${forkTarget(f)})`);
  const edits = editsNotApplied(result);
  if (edits.length > LISTED_FORKS)
    lines.push(
      `edit not applied  ${n(edits.length)} edit(s): the forks' last edit of these files failed (--json lists them)`,
    );
  else
    for (const e of edits)
      lines.push(`edit not applied  ${e.fork}: ${e.path} (${e.code}); the fork's last edit of this file failed`);
  return lines;
}

/**
 * What stderr says after a run whose forks are not all done (with `--json` too): how many, each
 * with its status, reason and file or directive (grouped past `LISTED_FORKS`; left out with
 * `listed`: the summary above already lists them), and the command that retries or continues
 * them. No command when another line gives the one to run: after Ctrl-C (the resume line comes
 * last) or at the spend cap (its line names the cap to go on with). Empty when all are done.
 */
export function notDoneMessage(
  result: FanOutResult,
  options: { listed?: boolean; interrupted?: boolean; statusOf?: StatusOf | undefined } = {},
): string[] {
  const forks = notDoneForks(result, options.statusOf);
  if (forks.length === 0) return [];
  const lines = [
    `${forks.length} of ${result.forks.length} fork(s) not done${options.listed === true ? ' (listed above)' : ':'}`,
    ...(options.listed === true
      ? []
      : problemLines({ ...result, forks })
          .filter((l) => !l.startsWith('edit not applied'))
          .map((l) => `  ${l}`)),
  ];
  const dir = result.summary.run_dir;
  const capped = result.summary.spend_cap?.stopped === true;
  if (dir !== undefined && options.interrupted !== true && !capped) {
    // every fork done and changing nothing: most often the directive names what no file has
    // (a typo, a rename done already), and a retry pays to hear the same
    if (forks.length === result.forks.length && forks.every((f) => f.status === 'no_change'))
      lines.push(
        'not one fork changed a file: check the directives (does what they name occur in the files?) before a retry',
      );
    if (forks.some((f) => isRetryableStatus(f.status)))
      lines.push(`retry them with: ${resumeCommand(dir, ['--retry', 'all-not-done'])}`);
    if (forks.some((f) => f.status === 'failed')) lines.push(`continue the failed ones with: ${resumeCommand(dir)}`);
  }
  return lines;
}

/** The `--json` summary object: the fields the README documents, plus the ledger's detail. */
export function jsonSummary(result: FanOutResult, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const s = result.summary;
  return {
    ...extra,
    // every end status, zeros included (src/core/util/fork-status.ts); `running` is never left at the end
    forks: Object.fromEntries(['total', ...FORK_END_STATUSES].map((k) => [k, s.forks[k as keyof typeof s.forks]])),
    usage: {
      input_tokens: s.usage.input_tokens,
      cache_creation_input_tokens: s.usage.cache_creation_input_tokens,
      cache_read_input_tokens: s.usage.cache_read_input_tokens,
      output_tokens: s.usage.output_tokens,
    },
    cache: {
      fanout_hit_ratio: s.cache.fanout_hit_ratio,
      max_fanout_reads: s.cache.max_fanout_reads,
      cache_efficiency: s.cache.cache_efficiency,
      warmups: s.warmups,
    },
    cost_usd: { actual: s.cost_usd.actual, no_cache: s.cost_usd.no_cache, fresh_agents: s.cost_usd.fresh_agents },
    savings: s.savings,
    unpriced: s.unpriced,
    warnings: s.warnings,
    model_table_date: s.model_table_date,
    ...(s.sandbox ? { sandbox: s.sandbox } : {}),
    ...(s.host_sandboxes ? { host_sandboxes: s.host_sandboxes } : {}),
    prefix: {
      sha256: s.prefix.sha256,
      bytes: s.prefix.bytes,
      shared_tokens: s.prefix.shared_tokens,
      drift_events: s.prefix.drift_events,
      source: s.prefix.source,
    },
    run_dir: s.run_dir ?? null,
    tree_total_covers: totalCovers(result),
    requests: { ...attemptCounts(result), billed_unrecorded: unrecordedJson(result) },
    edits_not_applied: editsNotApplied(result),
    // forks that changed no file, and whether the run required a change of each
    no_change: { forks: s.forks.no_change, require_change: s.require_change === true },
    rate_limits: s.rate_limits,
    spend_cap: s.spend_cap,
    // a local engine's compute (llama-cpp, openai-compatible); absent on hosted APIs
    ...(s.engine ? { engine: s.engine } : {}),
    fork_results: result.forks.map((f) => ({
      fork_id: f.forkId,
      status: f.status,
      directive: f.directive,
      ...(f.fields ? { fields: f.fields } : {}),
      turns: f.turns,
      tool_calls: f.toolCalls,
      files_changed: f.filesChanged,
      report: f.report ?? null,
      error: f.error ?? null,
      // worktree runs: where the fork's change is (`forkcache diff` / `merge` take it from there)
      ...(f.worktree
        ? {
            branch: f.worktree.branch,
            commit: f.worktree.commit,
            diff_stat: f.worktree.diffStat,
            // what the check created and the commit left out (repository-relative)
            left_out: f.worktree.leftOut ?? [],
          }
        : {}),
      ...(f.host ? { host: { id: f.host.id, sandbox: f.host.sandbox?.kind ?? null, clamped: f.host.clamped } } : {}),
    })),
  };
}
