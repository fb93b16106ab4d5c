// What a spawned `forkcache` command costs to start, as the suite builds it
// (test/setup/built-sources.ts): the command bundled with code splitting against the same
// sources built one file per module. Each arm runs `forkcache ARGS` (default `run --help`: the
// run command's module graph, loaded and not run) --runs times, alternating the two; the CPU is
// the child's own (user + system, read by a preload at its exit), per run.
// Ratios, not times: run both in one run.
// Run: npx tsx bench/suite/cli-start.ts [--runs 8] [-- ARGS]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtSources, CLI_BUNDLE_MAIN } from '../../test/setup/built-sources.ts';
import { alternate, type Sample } from './alternate.ts';

const at = process.argv.indexOf('--runs');
const runs = at < 0 ? 8 : Number(process.argv[at + 1]);
const dashes = process.argv.indexOf('--');
const args = dashes < 0 ? ['run', '--help'] : process.argv.slice(dashes + 1);

// the child's CPU, written to stderr's last line when it exits
const preload = join(mkdtempSync(join(tmpdir(), 'fc-bench-')), 'cpu.cjs');
writeFileSync(
  preload,
  "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('\\ncpu ' + (u.user + u.system) / 1000 + '\\n'); });\n",
);

function start(main: string): Sample {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--require', preload, main, ...args], { encoding: 'utf8' });
  const wallMs = performance.now() - t0;
  const cpu = /cpu ([\d.]+)\s*$/.exec(r.stderr);
  if (!cpu) throw new Error(`no CPU line from ${main}: exit ${r.status}\n${r.stderr}`);
  return { cpuMs: Number(cpu[1]), wallMs };
}

const built = await builtSources();
const arms = { bundle: join(built, CLI_BUNDLE_MAIN), modules: join(built, 'src/cli/main.js') };
console.log(JSON.stringify({ args, runs, ...(await alternate(runs, arms, ['modules', 'bundle'], start)) }));
