import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SuiteResult } from './types.ts';

/**
 * Where a bench run's results go. A quick run is a smoke test of the suites, with shorter
 * sweeps: its figures go to `quick.{json,md}`, so only a full run replaces the committed
 * `latest.{json,md}` that the README and the benchmark report quote.
 */
export function resultsName(quick: boolean): 'quick' | 'latest' {
  return quick ? 'quick' : 'latest';
}

/** The results as Markdown: one table per suite, its conclusion under it. */
export function markdown(results: readonly SuiteResult[], machine: string): string {
  const parts = [`# forkcache benchmarks\n\nMachine: ${machine}\n`];
  for (const r of results) {
    const cols = Object.keys(r.rows[0] ?? {});
    // Three significant digits below 100, whole numbers above; never exponent notation (1,090, not 1.09e+3).
    const fmt = (v: unknown): string => {
      if (typeof v !== 'number') return String(v);
      if (Number.isInteger(v) || Math.abs(v) >= 100) return Math.round(v).toLocaleString('en-US');
      return v.toPrecision(3);
    };
    parts.push(
      `## ${r.title}\n\n${r.ranOn ? `(kept from an earlier run: ${r.ranOn})\n\n` : ''}| ${cols.join(' | ')} |\n|${cols.map(() => '---').join('|')}|\n${r.rows.map((row) => `| ${cols.map((c) => fmt(row[c])).join(' | ')} |`).join('\n')}\n${r.conclusion ? `\n${r.conclusion}\n` : ''}`,
    );
  }
  return parts.join('\n');
}

export interface WriteOptions {
  quick: boolean;
  /** Keep the other suites of the previous file of the same kind (quick or full). */
  merge: boolean;
  machine: string;
  /** Suite names in the order the tables are printed. */
  order: readonly string[];
  date?: Date;
}

/** Write `<name>.json` and `<name>.md` into `dir`; returns the Markdown. */
export function writeResults(dir: string, fresh: readonly SuiteResult[], o: WriteOptions): string {
  mkdirSync(dir, { recursive: true });
  const name = resultsName(o.quick);
  const json = join(dir, `${name}.json`);
  let results = [...fresh];
  if (o.merge && existsSync(json)) {
    const previous = JSON.parse(readFileSync(json, 'utf8')) as { date: string; machine: string; suites: SuiteResult[] };
    const names = new Set(fresh.map((r) => r.name));
    const kept = previous.suites
      .filter((r) => !names.has(r.name))
      .map((r) => ({ ...r, ranOn: r.ranOn ?? `${previous.machine}, ${previous.date.slice(0, 10)}` }));
    results = [...kept, ...fresh].sort((a, b) => o.order.indexOf(a.name) - o.order.indexOf(b.name));
  }
  const date = (o.date ?? new Date()).toISOString();
  writeFileSync(json, `${JSON.stringify({ date, machine: o.machine, quick: o.quick, suites: results }, null, 2)}\n`);
  const md = markdown(results, o.machine);
  writeFileSync(join(dir, `${name}.md`), md);
  return md;
}
