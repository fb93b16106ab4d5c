import { basename } from 'node:path';
import { parseReport } from '../../core/fork/report.ts';
import { costNano, nanoToUsd, noCacheNano } from '../../core/ledger/cost.ts';
import { BUILTIN_CATALOGUE, findModel, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { totalInputTokens, type Usage } from '../../core/ledger/usage.ts';
import { missDiagnostics } from './diagnostics.ts';
import type { RunEvent, RunEventOf } from '../../core/run-dir/schemas.ts';
import { type FanOutFiles, usageAt } from './run-files.ts';
import type { ForkRow, RequestPoint, RunModel, Segment } from './run-types.ts';

// The model's shapes live in run-types.ts: diagnostics.ts reads them too, and run-model imports it.

/** `fo001-e3a67061-f03` → `f03` (the fan-out id is in the page title already). */
function shortForkId(forkId: string, fanOutId: string): string {
  return forkId.startsWith(`${fanOutId}-`) ? forkId.slice(fanOutId.length + 1) : forkId;
}

function ofType<K extends RunEvent['type']>(events: RunEvent[], type: K): RunEventOf<K>[] {
  return events.filter((e): e is RunEventOf<K> => e.type === type);
}

function timeline(files: FanOutFiles, id: string): { rows: string[]; segments: Segment[]; durationMs: number } {
  const { events } = files;
  const start = ofType(events, 'fanout-start')[0]!;
  const t0 = start.at;
  // the last pass's end: a resumed run is one timeline (passes laid end to end)
  const end = Math.max(ofType(events, 'fanout-end').at(-1)?.at ?? 0, ...events.map((e) => e.at));
  const rel = (t: number): number => Math.max(0, t - t0);
  const segments: Segment[] = [];
  const rows: string[] = [];
  const warmStart = ofType(events, 'warmup-start')[0];
  if (warmStart) {
    rows.push('warm-up');
    const warmEnd = ofType(events, 'warmup-end')[0];
    segments.push({ row: 'warm-up', phase: 'request', start: rel(warmStart.at), end: rel(warmEnd?.at ?? end) });
  }
  for (const { forkId } of start.forks) {
    const row = shortForkId(forkId, id);
    rows.push(row);
    const mine = events.filter((e) => 'forkId' in e && e.forkId === forkId);
    const starts = ofType(mine, 'fork-start');
    const ends = ofType(mine, 'fork-end');
    const finished = ends.at(-1)?.at ?? end;
    segments.push({ row, phase: 'queued', start: 0, end: rel(starts[0]?.at ?? finished) });
    // one running span per pass the fork ran in (cancelled in one, resumed in the next)
    for (const began of starts) {
      const stop = ends.find((e) => e.at >= began.at)?.at ?? end;
      segments.push({ row, phase: 'running', start: rel(began.at), end: rel(stop) });
    }
    // Pair each turn-start with what closes it, in file order: its turn-end, or a worker
    // restart (the turn was interrupted and is sent again), or the fork's end.
    let open: RunEventOf<'turn-start'> | undefined;
    const close = (until: number, sent?: number): void => {
      if (!open) return;
      // Only a first request waits at the warm-first gate; later waits are the API queue.
      const from = open.turn === 1 && sent !== undefined && sent > open.at ? sent : open.at;
      if (from > open.at) segments.push({ row, phase: 'warming', start: rel(open.at), end: rel(from) });
      segments.push({ row, phase: 'request', start: rel(from), end: rel(until) });
      open = undefined;
    };
    for (const e of mine) {
      if (e.type === 'turn-start') open = e;
      else if (e.type === 'turn-end') close(e.request.endedAt, e.request.sentAt);
      else if (e.type === 'fork-restart') close(e.at);
    }
    close(finished);
    if (finished < end) segments.push({ row, phase: 'done', start: rel(finished), end: rel(end) });
  }
  return { rows, segments, durationMs: rel(end) };
}

function requests(files: FanOutFiles, id: string, catalogue: ModelCatalogue): RequestPoint[] {
  const info = files.model ? findModel(files.model, catalogue) : undefined;
  // Each request is priced with the row in force on its own date; a model the catalogue does
  // not know leaves cost and no-cache undefined (the report says it is unpriced).
  const priced = (usage: Usage, at: number): Pick<RequestPoint, 'cost' | 'noCache'> =>
    info && info.prices.length > 0
      ? {
          cost: nanoToUsd(costNano(usage, info, at, catalogue).total),
          noCache: nanoToUsd(noCacheNano(usage, info, at, catalogue)),
        }
      : { cost: undefined, noCache: undefined };
  const out: RequestPoint[] = [];
  const warmStart = ofType(files.events, 'warmup-start')[0];
  for (const e of ofType(files.events, 'warmup-end')) {
    if (!e.usage) continue;
    const usage = usageAt(e.usage, `${files.dir}/events.jsonl:${e.line}`);
    out.push({
      label: 'warm-up',
      forkId: undefined,
      kind: 'warmup',
      turn: 0,
      sentAt: warmStart?.at ?? e.at,
      usage,
      ...priced(usage, warmStart?.at ?? e.at),
    });
  }
  for (const e of ofType(files.events, 'turn-end')) {
    const usage = usageAt(e.request.usage, `${files.dir}/events.jsonl:${e.line}`);
    const label = `${shortForkId(e.forkId, id)} t${e.turn}`;
    out.push({
      label,
      forkId: e.forkId,
      kind: 'fork',
      turn: e.turn,
      sentAt: e.request.sentAt,
      usage,
      // priced on the day it was sent, not where the combined timeline lays it
      ...priced(usage, e.request.sentAt - (e.shift ?? 0)),
    });
  }
  return out.sort((a, b) => a.sentAt - b.sentAt);
}

function forkRows(files: FanOutFiles, id: string): ForkRow[] {
  const start = ofType(files.events, 'fanout-start')[0]!;
  const ends = new Map(ofType(files.events, 'fork-end').map((e) => [e.forkId, e]));
  const restarts = ofType(files.events, 'fork-restart');
  return start.forks.map(({ forkId, directive }) => {
    const end = ends.get(forkId);
    const transcript = files.transcripts.get(forkId);
    const text = transcript?.finalText;
    return {
      forkId,
      short: shortForkId(forkId, id),
      directive,
      status: end?.status ?? transcript?.status ?? 'unfinished',
      turns: end?.turns ?? 0,
      toolCalls: end?.toolCalls ?? 0,
      filesChanged: end?.filesChanged ?? [],
      restarts: restarts.filter((r) => r.forkId === forkId).length,
      report: text ? parseReport(text) : undefined,
      error: end?.error ?? undefined,
    };
  });
}

/** Everything a run report shows, derived from the files of one fan-out. */
/** `catalogue` prices the requests (default the built-in one; `--model-table` merges over it). */
export function buildRunModel(files: FanOutFiles, catalogue: ModelCatalogue = BUILTIN_CATALOGUE): RunModel {
  const id = files.manifest.fanoutId || basename(files.dir);
  const { rows, segments, durationMs } = timeline(files, id);
  const points = requests(files, id, catalogue);
  const forks = forkRows(files, id);
  return {
    files,
    id,
    rows,
    segments,
    requests: points,
    forks,
    durationMs,
    diagnostics: missDiagnostics(files, points, forks),
  };
}

/** Hit ratio of one request: cache reads over all its input tokens (0 for no input). */
export function hitRatio(usage: Usage): number {
  const total = totalInputTokens(usage);
  return total === 0 ? 0 : usage.cache_read_input_tokens / total;
}
