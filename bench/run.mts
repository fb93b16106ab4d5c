// `npm run bench [-- --quick] [-- --only=name,name] [-- --merge] [-- --out=DIR]`: runs the suites in one process and
// writes bench/results/latest.json and latest.md (ratios measured in one run, on one machine);
// `--quick` writes quick.json and quick.md instead, so a smoke run never replaces the full figures.
// `--merge` keeps the other suites of the previous file of the same kind (each suite's ratios
// are still from one run of that suite). `--out=DIR` writes there instead of bench/results/.
import { fileURLToPath } from 'node:url';
import { arch, cpus, platform, totalmem } from 'node:os';
import { boundarySuite, dispatchSuite } from './boundary.ts';
import { economicsSuite } from './economics.ts';
import { engineSuite, engineToolsSuite } from './engine.ts';
import { economicsModelsSuite } from './economics-models.ts';
import { integrationSuite } from './integration.ts';
import { longWordsSuite } from './long-words.ts';
import { tokenizerSuite } from './tokenizer.ts';
import { memorySuite } from './memory.ts';
import { overheadSuite } from './overhead.ts';
import { proxyMemorySuite } from './proxy-memory.ts';
import { proxyFanoutSuite, proxyOverheadSuite } from './proxy.ts';
import { rateLimitsSuite } from './rate-limits.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';
import { writeResults } from './results-files.ts';

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
  'long-words': longWordsSuite,
  tokenizer: tokenizerSuite,
  // issue 42: the integration step's check runs and fix-up cost (needs `go`)
  integration: integrationSuite,
  // issue 26: the real engine (llama-server; hours on 2 cores, so only with --only=engine)
  engine: engineSuite,
  // issue 36: forks with tools on the real engine (about 12 minutes on 2 idle cores)
  'engine-tools': engineToolsSuite,
};

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.find((a) => a.startsWith('--only='))?.slice('--only='.length);
// the engine suites run only when named: they need llama-server and take hours
const names = onlyArg ? onlyArg.split(',') : Object.keys(SUITES).filter((name) => !name.startsWith('engine'));
for (const name of names)
  if (!SUITES[name]) throw new Error(`--only: unknown suite "${name}" (known: ${Object.keys(SUITES).join(', ')})`);
const machine = `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${platform()} ${arch()}, Node ${process.version}`;
const results: SuiteResult[] = [];
for (const name of names) {
  process.stderr.write(`bench: ${name}${quick ? ' (quick)' : ''}...\n`);
  results.push(await SUITES[name]!({ quick }));
}
const outArg = args.find((a) => a.startsWith('--out='))?.slice('--out='.length);
const md = writeResults(outArg ?? fileURLToPath(new URL('./results/', import.meta.url)), results, {
  quick,
  merge: args.includes('--merge'),
  machine,
  order: Object.keys(SUITES),
});
process.stdout.write(md);
