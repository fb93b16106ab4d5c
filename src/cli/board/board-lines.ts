import { totalInputTokens } from '../../core/ledger/usage.ts';
import type { BoardState, ForkRow } from './board-state.ts';
import { fit } from './live-area.ts';

const fmt = (n: number): string => n.toLocaleString('en-US');
const short = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}K` : n.toLocaleString('en-US');
const pct = (x: number | null): string => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
const usd = (x: number | null): string => (x === null ? 'unpriced' : `$${x.toFixed(4)}`);

/** `m:ss` (or `h:mm:ss`) of a duration. */
export function clockTime(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

/** The part of a fork id after the fan-out id (`f003`), for rows that name their fan-out above. */
const shortId = (id: string): string => id.slice(id.lastIndexOf('-') + 1);

export interface Paint {
  status(text: string, status: string): string;
}

/** `12/500 done · 32 running · 455 queued · 1 not done · elapsed 0:42 · ETA 3:10`. */
export function progressLine(state: BoardState, elapsedMs: number, etaMs: number | undefined): string {
  const c = state.counts();
  return [
    `${c.done + c.notDone}/${state.total} forks ended (${c.done} done${c.notDone > 0 ? `, ${c.notDone} not done` : ''})`,
    `${c.running} running`,
    `${c.queued} queued`,
    `elapsed ${clockTime(elapsedMs)}`,
    `ETA ${etaMs === undefined ? '-' : clockTime(etaMs)}`,
  ].join(' · ');
}

/** The cache and cost so far, the hit ratios named as in the summary. */
export function cacheLine(state: BoardState): string {
  const t = state.totals();
  return [
    `fan-out hit ratio ${pct(t.fanoutHit)}`,
    `all fork requests ${pct(t.allHit)}`,
    `read ${short(t.usage.cache_read_input_tokens)}`,
    `written ${short(t.usage.cache_creation_input_tokens)}`,
    `uncached ${short(t.usage.input_tokens)}`,
    `cost ${usd(t.cost)}`,
  ].join(' · ');
}

/** A running fork's row: its short id, turn, last tool, tokens, then what it works on (cut to the width). */
export function runningRow(row: ForkRow, columns: number): string {
  const tokens = totalInputTokens(row.usage) + row.usage.output_tokens;
  const head = ` ${shortId(row.id).padEnd(5)} turn ${String(row.turn).padStart(2)}  ${row.tool.padEnd(11)} ${fmt(tokens).padStart(9)} tok  `;
  // the end of a path is the part that tells files apart
  return head + fit(row.label, Math.max(8, columns - 1 - head.length), 'start');
}

/** A finished fork, once, above the board: full id, status, turns, tools, tokens, hit, cost, label, and why if not done. */
export function finishedLine(row: ForkRow, paint: Paint): string {
  const tokens = totalInputTokens(row.usage) + row.usage.output_tokens;
  const cost = usd(row.cost);
  const parts = [
    row.id,
    paint.status(row.status.padEnd(9), row.status),
    `${row.turn} turns`,
    `${row.toolCalls} tools`,
    `${fmt(tokens)} tok`,
    `hit ${pct(totalInputTokens(row.usage) === 0 ? null : row.usage.cache_read_input_tokens / totalInputTokens(row.usage))}`,
    cost,
    row.label,
  ];
  return `${parts.join('  ')}${row.error ? `  (${row.error})` : ''}`;
}

/** Under the rows that fit: what is not shown. */
export function footerLine(state: BoardState, hiddenRunning: number): string {
  const c = state.counts();
  return [
    ...(hiddenRunning > 0 ? [`+${hiddenRunning} more running`] : []),
    `+${c.queued} queued`,
    `${c.done} done`,
    `${c.notDone} not done`,
  ].join(', ');
}
