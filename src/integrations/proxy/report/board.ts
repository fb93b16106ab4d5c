import { terminalSafe } from '../../../core/util/terminal-text.ts';
import type { Proxy } from '../server.ts';
import type { ProxySummary } from './summary.ts';
import type { ExchangeRecord } from '../diagnosis/types.ts';

const fmt = (n: number): string => n.toLocaleString('en-US');
const usd = (x: number | null): string => (x === null ? 'n/a' : `$${x.toFixed(4)}`);
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** One exchange as a plain line (not a TTY, or `--json`); wire text in it cannot drive the terminal. */
export function exchangeLine(r: ExchangeRecord): string {
  return terminalSafe(plainLine(r));
}

function plainLine(r: ExchangeRecord): string {
  const u = r.usage;
  const tokens = u
    ? ` read ${fmt(u.cache_read_input_tokens)} written ${fmt(u.cache_creation_input_tokens)} uncached ${fmt(u.input_tokens)} out ${fmt(u.output_tokens)} ${usd(r.costUsd)}`
    : '';
  const where = [r.session && `session ${r.session}`, r.fanout, r.kind !== 'main' ? r.kind : undefined]
    .filter(Boolean)
    .join(' ');
  const warm = r.warm ? ` warm-first:${r.warm}${r.heldMs > 0 ? ` ${Math.round(r.heldMs)}ms` : ''}` : '';
  const why =
    r.error ?? (r.diagnosis && r.diagnosis.reason !== 'read' ? `${r.diagnosis.reason}: ${r.diagnosis.detail}` : '');
  return `#${r.seq} ${r.method} ${r.path} ${r.status ?? '---'} ${r.model ?? ''}${tokens}${r.ttfbMs === undefined ? '' : ` ttfb ${Math.round(r.ttfbMs)}ms`}${where ? ` [${where}]` : ''}${warm}${why ? ` ${why}` : ''}`;
}

/** The live board's lines: totals, the latest fan-outs, the latest miss; each terminal-safe. */
export function boardLines(
  s: ProxySummary,
  inFlight: number,
  held: number,
  lastMiss: ExchangeRecord | undefined,
): string[] {
  return rawBoardLines(s, inFlight, held, lastMiss).map(terminalSafe);
}

function rawBoardLines(
  s: ProxySummary,
  inFlight: number,
  held: number,
  lastMiss: ExchangeRecord | undefined,
): string[] {
  const input = s.usage.input_tokens + s.usage.cache_creation_input_tokens + s.usage.cache_read_input_tokens;
  const lines = [
    `forkcache proxy → ${s.upstream}: ${fmt(s.requests.total)} requests, ${inFlight} in flight${held > 0 ? `, ${held} held (warm-first)` : ''}, ${fmt(s.requests.errors)} failed`,
    `tokens  read ${fmt(s.usage.cache_read_input_tokens)} written ${fmt(s.usage.cache_creation_input_tokens)} uncached ${fmt(s.usage.input_tokens)}, hit ratio ${input === 0 ? '-' : pct(s.cache.hit_ratio)}`,
    `cost    ${usd(s.cost_usd.actual)} (no cache ${usd(s.cost_usd.no_cache)})${s.saved_by_proxy_usd.total > 0 ? `, saved by the proxy ${usd(s.saved_by_proxy_usd.total)}` : ''}`,
  ];
  for (const f of s.fanouts.slice(-4))
    lines.push(
      `${f.id.padEnd(7)} ${String(f.requests).padStart(3)} requests  hit ${pct(f.hit_ratio)} of max ${pct(f.max_hit_ratio)}  efficiency ${f.cache_efficiency.toFixed(3)}  ${usd(f.cost_usd)}`,
    );
  if (lastMiss?.diagnosis)
    lines.push(`last miss #${lastMiss.seq}: ${lastMiss.diagnosis.reason}: ${lastMiss.diagnosis.detail}`.slice(0, 200));
  return lines;
}

/**
 * Progress on stderr. On a terminal, a board redrawn in place as exchanges end (and twice a
 * second while requests are in flight); otherwise one plain line per exchange.
 */
export function attachBoard(proxy: Proxy, stream: NodeJS.WriteStream, plain: boolean): () => void {
  if (plain || !stream.isTTY) {
    return proxy.on('exchange-end', (r) => stream.write(`${exchangeLine(r)}\n`));
  }
  let drawn = 0;
  let lastMiss: ExchangeRecord | undefined;
  const draw = (): void => {
    const lines = boardLines(proxy.summary(), proxy.inFlight, proxy.held, lastMiss).map((l) =>
      l.slice(0, Math.max(20, (stream.columns ?? 120) - 1)),
    );
    // Move up over the previous board and clear each line before writing the new one.
    stream.write(`${drawn > 0 ? `\x1b[${drawn}F` : ''}${lines.map((l) => `\x1b[2K${l}`).join('\n')}\n`);
    drawn = lines.length;
  };
  const off = proxy.on('exchange-end', (r) => {
    if (r.diagnosis && !['read', 'new_prefix'].includes(r.diagnosis.reason)) lastMiss = r;
    draw();
  });
  const timer = setInterval(() => proxy.inFlight > 0 && draw(), 500);
  timer.unref();
  draw();
  return () => {
    off();
    clearInterval(timer);
  };
}
