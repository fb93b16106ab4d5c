import { resolve } from 'node:path';
import type { ForkEngine } from '../../core/engine/engine.ts';
import type { FanOut } from '../../core/agent/fork-handle.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import type { Endpoint } from '../endpoint.ts';
import type { IntegrationSettings } from '../integration-settings.ts';
import type { CacheContinuity } from '../importers/cache-continuity.ts';
import { cancelOnInterrupt, INTERRUPTED_EXIT_CODE, interruptedLine } from '../interrupt.ts';
import { forkRowsInSummary } from '../board/summary-rows.ts';
import { ProgressBoard } from '../board/progress-board.ts';
import {
  editsNotApplied,
  formatFanOutResult,
  jsonSummary,
  notDoneForks,
  notDoneMessage,
} from '../output/summary-table.ts';
import { reportAfterRun } from './report.ts';
import { SPEND_CAP_EXIT_CODE, spendCapMessage } from '../output/budget-line.ts';
import { closeAll, settledOrForks } from '../output/fan-out-ending.ts';
import { maxUsdMessage } from '../output/max-usd-line.ts';
import { hostSandboxLines, redisLostLine } from '../distributed-run.ts';
import { integrateAfterRun } from '../integrate/after-run.ts';
import { integratedStatusOf, integrationExitCode, integrationLines, withIntegration } from '../integrate/report.ts';
import { printErr, printOut } from '../terminal-safe.ts';

/**
 * Where a command's output goes: `out` is stdout (the summary, the JSON), `err` takes one line
 * of stderr without its newline. Commands write to a sink, never to the process, so a test
 * calls a command's action with its own sink.
 */
export interface OutputSink {
  out(text: string): void;
  err(line: string): void;
}

/** The process's standard streams, made terminal-safe. */
export const terminalSink: OutputSink = { out: printOut, err: (line) => void printErr(`${line}\n`) };

/** The flags every fan-out (`run`, `resume`) ends with. */
interface EndingFlags {
  json: boolean;
  report?: boolean | string | undefined;
  redis?: string | undefined;
}

/**
 * One fan-out under way: what `run` starts from a plan, and `resume` from each manifest of a
 * run directory. The rest (the board, the ending, the exit code) is the same for both.
 */
export interface Pass {
  engine: ForkEngine;
  target: Endpoint;
  fan: FanOut;
  /** the fan-out's run directory */
  dir: string;
  model: string;
  catalogue: ModelCatalogue;
  integration?: IntegrationSettings | undefined;
  /** a parent rebuilt from a session transcript: how much of its cache the forks kept */
  continuity?: CacheContinuity | undefined;
  /** fields of `--json` before the summary's */
  json: Record<string, unknown>;
  /** a plan's run names its run directory last when nothing is left to do (status, diff, merge) */
  namesRunDir?: boolean;
}

/** What a pass ended with, as the exit code counts it. */
interface PassOutcome {
  /** forks not done, edits not applied, a report or a cost that failed */
  failed: number;
  /** an integrated pass's code (exit-codes.ts) */
  integrationCode?: number;
  spendCap: boolean;
}

/**
 * The Ctrl-C handling of a command, started when the command first needs it (a plan is loaded
 * and its engine made before a Ctrl-C cancels forks rather than ending the process).
 */
export class Interruptible {
  #interrupt: ReturnType<typeof cancelOnInterrupt> | undefined;
  /** the engine of the pass under way: what a stuck Ctrl-C stops */
  current: ForkEngine | undefined;
  board: ProgressBoard | undefined;
  constructor(private readonly sink: OutputSink) {}
  get handle(): ReturnType<typeof cancelOnInterrupt> {
    // while the board is up, its lines scroll above it: a plain write would be drawn over
    this.#interrupt ??= cancelOnInterrupt((line) => (this.board ? this.board.log(line) : this.sink.err(line)), {
      stop: async () => this.current?.destroy(),
    });
    return this.#interrupt;
  }
  get interrupted(): boolean {
    return this.#interrupt?.interrupted ?? false;
  }
  dispose(): void {
    this.#interrupt?.dispose();
  }
}

/**
 * Drive one pass to its end: the progress board, the integration, the report, the summary
 * (text or `--json`) and the lines that say what is left to do, the resume command last.
 * The pass's engine and endpoint are closed whatever happens.
 */
async function drivePass(pass: Pass, opts: EndingFlags, ctl: Interruptible, sink: OutputSink): Promise<PassOutcome> {
  const { engine, target, fan, dir, catalogue, continuity } = pass;
  const log = (line: string): void => sink.err(line);
  ctl.current = engine;
  try {
    ctl.handle.watch(fan);
    // first, so a run that ends any way at all (0, a crash, a kill) has said where it is
    if (pass.namesRunDir) log(`forkcache run: run directory ${resolve(dir)}`);
    ctl.board = new ProgressBoard({ model: pass.model, plain: opts.json, catalogue, budget: () => engine.admission });
    ctl.board.plan(fan);
    for await (const event of fan) {
      ctl.board.onEvent(event);
      continuity?.onEvent(event as Parameters<CacheContinuity['onEvent']>[0]);
    }
    ctl.board.stop();
    ctl.board = undefined;
    if (continuity) log(continuity.line());
    const result = await settledOrForks(fan, dir, log);
    // the forks' work is judged merged: after Ctrl-C or at a spend cap, what is done stays on its branches
    const integrated =
      pass.integration && !ctl.interrupted
        ? await integrateAfterRun(dir, pass.integration, engine, catalogue, log)
        : undefined;
    const statusOf = integrated ? integratedStatusOf(integrated) : undefined;
    // a plan's run names the directory its summary gives, a resumed one the directory it was given
    const shownDir = pass.namesRunDir ? result.summary.run_dir : dir;
    const report = await reportAfterRun(shownDir, opts.report, log, catalogue);
    if (opts.json) {
      const json = jsonSummary(result, {
        ...pass.json,
        ...(ctl.interrupted && pass.namesRunDir ? { interrupted: true } : {}),
        ...(report.path && pass.namesRunDir ? { report: report.path } : {}),
        ...(continuity ? { parent_cache: continuity.json() } : {}),
      });
      sink.out(`${JSON.stringify(integrated ? withIntegration(json, integrated) : json)}\n`);
    } else
      sink.out(
        `\n${formatFanOutResult(result, pass.model, catalogue, { forkRows: forkRowsInSummary(opts.json), ...(statusOf ? { statusOf } : {}) })}\n${integrated ? `${integrationLines(integrated).join('\n')}\n` : ''}`,
      );
    const hint = ctl.interrupted ? interruptedLine(result) : undefined;
    // the text summary above listed the forks not done: stderr counts them and says what to run
    for (const line of notDoneMessage(result, { listed: !opts.json, interrupted: hint !== undefined, statusOf }))
      log(line);
    for (const line of hostSandboxLines(result)) log(line);
    const lost = redisLostLine(result, opts.redis);
    if (lost) log(lost);
    const capped = result.summary.spend_cap?.stopped === true;
    // the one command that goes on under the cap, after the forks it stopped
    if (capped) log(maxUsdMessage(dir, result.summary.spend_cap!));
    const rateCapped = result.summary.rate_limits.stopped !== null;
    if (rateCapped)
      log(spendCapMessage(shownDir, result.forks.filter((f) => f.error?.code === 'RATE_LIMIT_SPEND_CAP').length));
    if (result.summary.cost_error !== null) log(result.summary.cost_error);
    // an edit a fork could not apply is lost work: never a silent 0; an integrated pass is
    // judged by its integration (its local checks' failures are advisory)
    const failed =
      (integrated ? 0 : notDoneForks(result).length) +
      editsNotApplied(result).length +
      (report.failed ? 1 : 0) +
      (result.summary.cost_error !== null ? 1 : 0);
    const spendCap = capped || rateCapped;
    // a run with nothing left to do names its run directory last, for status, diff and merge
    if (
      pass.namesRunDir &&
      failed === 0 &&
      notDoneForks(result, statusOf).length === 0 &&
      !ctl.interrupted &&
      !spendCap
    )
      log(`run directory: ${resolve(dir)} (forkcache status|diff|merge ${resolve(dir)})`);
    // the resume command is the last line after Ctrl-C, whatever the run's size
    if (hint) log(hint);
    return { failed, spendCap, ...(integrated ? { integrationCode: integrationExitCode(integrated) } : {}) };
  } finally {
    ctl.board?.stop();
    ctl.board = undefined;
    await closeAll(engine, target);
  }
}

/**
 * The exit code of `run` and `resume` over their passes: 130 after Ctrl-C, 3 at a spend cap,
 * 1 for work not done, else the worst integration's code (exit-codes.ts), else 0.
 */
export function fanOutExitCode(outcomes: readonly PassOutcome[], interrupted: boolean): number {
  if (interrupted) return INTERRUPTED_EXIT_CODE;
  if (outcomes.some((o) => o.spendCap)) return SPEND_CAP_EXIT_CODE;
  if (outcomes.some((o) => o.failed > 0)) return 1;
  return Math.max(0, ...outcomes.map((o) => o.integrationCode ?? 0));
}

/** Drive every pass `passes` yields, one after another, to one exit code. */
export async function driveAll(
  passes: (ctl: Interruptible) => AsyncIterable<Pass>,
  opts: EndingFlags,
  sink: OutputSink,
): Promise<number> {
  const ctl = new Interruptible(sink);
  const outcomes: PassOutcome[] = [];
  try {
    for await (const pass of passes(ctl)) outcomes.push(await drivePass(pass, opts, ctl, sink));
  } finally {
    ctl.dispose();
  }
  return fanOutExitCode(outcomes, ctl.interrupted);
}
