// `npm run bench [-- --quick] [-- --only=name,name] [-- --merge]`: runs the suites in one process and
// writes bench/results/latest.json and latest.md (ratios measured in one run, on one machine).
// `--merge` keeps the other suites of the previous latest.json (each suite's ratios are still
// from one run of that suite).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { arch, cpus, platform, totalmem } from 'node:os';
import { boundarySuite, dispatchSuite } from './boundary.ts';
import { economicsSuite } from './economics.ts';
import { engineSuite } from './engine.ts';
import { economicsModelsSuite } from './economics-models.ts';
import { memorySuite } from './memory.ts';
import { overheadSuite } from './overhead.ts';
import { proxyMemorySuite } from './proxy-memory.ts';
import { proxyFanoutSuite, proxyOverheadSuite } from './proxy.ts';
import { rateLimitsSuite } from './rate-limits.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

// In issue order: 1 dispatch, 2 memory, 3 boundary, 4 economics (4b by read multiplier), 5 overhead, 6 rate limits; then the proxy (issue 18).
const SUITES: Record<string, (o: SuiteOptions) => Promise<SuiteResult>> = {
  dispatch: dispatchSuite,
  memory: memorySuite,
  boundary: boundarySuite,
  economics: economicsSuite,
  'economics-models': economicsModelsSuite,
  overhead: overheadSuite,
  'rate-limits': rateLimitsSuite,
  'proxy-fanout': proxyFanoutSuite,
  'proxy-overhead': proxyOverheadSuite,
  'proxy-memory': proxyMemorySuite,
  // issue 26: the real engine (llama-server; hours on 2 cores, so only with --only=engine)
  engine: engineSuite,
};

function markdown(results: SuiteResult[], machine: string): string {
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

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.find((a) => a.startsWith('--only='))?.slice('--only='.length);
// the engine suite runs only when named: it needs llama-server and takes hours
const names = onlyArg ? onlyArg.split(',') : Object.keys(SUITES).filter((name) => name !== 'engine');
for (const name of names)
  if (!SUITES[name]) throw new Error(`--only: unknown suite "${name}" (known: ${Object.keys(SUITES).join(', ')})`);
const machine = `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${platform()} ${arch()}, Node ${process.version}`;
const results: SuiteResult[] = [];
for (const name of names) {
  process.stderr.write(`bench: ${name}${quick ? ' (quick)' : ''}...\n`);
  results.push(await SUITES[name]!({ quick }));
}
const dir = new URL('./results/', import.meta.url);
mkdirSync(dir, { recursive: true });
if (args.includes('--merge') && existsSync(new URL('latest.json', dir))) {
  const previous = JSON.parse(readFileSync(new URL('latest.json', dir), 'utf8')) as {
    date: string;
    machine: string;
    suites: SuiteResult[];
  };
  const order = Object.keys(SUITES);
  const fresh = new Map(results.map((r) => [r.name, r]));
  const kept = previous.suites
    .filter((r) => !fresh.has(r.name))
    .map((r) => ({ ...r, ranOn: r.ranOn ?? `${previous.machine}, ${previous.date.slice(0, 10)}` }));
  const merged = [...kept, ...results];
  merged.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  results.splice(0, results.length, ...merged);
}
writeFileSync(
  new URL('latest.json', dir),
  `${JSON.stringify({ date: new Date().toISOString(), machine, quick, suites: results }, null, 2)}\n`,
);
const md = markdown(results, machine);
writeFileSync(new URL('latest.md', dir), md);
process.stdout.write(md);
