// Issue 15, case 2: how long Ctrl-C takes to end a run, with the summary. Two forks sit in a
// long `bash` call; the run gets SIGINT once (and, with --twice, a second one at once).
// Run: npx tsx bench/reliability/ctrl-c.ts [--twice]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_DECLARATIONS } from '../../src/tools/declarations.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const twice = process.argv.includes('--twice');
const dir = mkdtempSync(join(tmpdir(), 'fc-bench-int-'));
const parent = {
  ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
  tools: TOOL_DECLARATIONS,
};
writeFileSync(
  join(dir, 'plan.json'),
  JSON.stringify({
    parent,
    directives: ['run `sleep 60` and report', 'run `sleep 60` and report'],
    workspace: '.',
    runDir: 'runs',
    allow: ['bash'],
    emulator: { script: 'refactor', latency: 'off' },
  }),
);
const child = spawn(process.execPath, [join(ROOT, 'bin/forkcache.js'), 'run', join(dir, 'plan.json'), '--json'], {
  cwd: dir,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, ANTHROPIC_API_KEY: '' },
});
let stdout = '';
child.stdout.on('data', (d: Buffer) => (stdout += d));
const started = (): number => {
  const runs = join(dir, 'runs');
  if (!existsSync(runs)) return 0;
  return readdirSync(runs)
    .flatMap((f) =>
      existsSync(join(runs, f, 'forks'))
        ? readdirSync(join(runs, f, 'forks')).map((t) => readFileSync(join(runs, f, 'forks', t), 'utf8'))
        : [],
    )
    .filter((t) => t.includes('"tool-start"')).length;
};
while (started() < 2) await new Promise((r) => setTimeout(r, 20));
const t0 = performance.now();
child.kill('SIGINT');
if (twice) child.kill('SIGINT');
const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
const ms = performance.now() - t0;
const summary = stdout.trim().split('\n').at(-1) ?? '';
console.log(
  JSON.stringify({
    signals: twice ? 2 : 1,
    exit: code,
    ms_to_exit: Math.round(ms),
    summary_printed: summary.includes('"interrupted":true'),
  }),
);
