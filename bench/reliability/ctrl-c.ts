// Issues 15 (case 2) and 27: how long Ctrl-C takes to end a run, with the summary.
//   --case bash   two forks sit in a long `bash` call (the grace timer's case)
//   --case plan   a plan of --forks N (default 500) renames, SIGINT once half have ended
//   --case demo   the demo with --forks N (default 64) at --latency L (default realistic), SIGINT at half
// With --twice a second SIGINT follows at once. Prints one JSON line: ms from the signal to the exit.
// Run: npx tsx bench/reliability/ctrl-c.ts [--case bash|plan|demo] [--forks N] [--latency L] [--twice]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    case: { type: 'string', default: 'plan' },
    forks: { type: 'string' },
    latency: { type: 'string', default: 'realistic' },
    twice: { type: 'boolean', default: false },
  },
});
const which = values.case;
const forks = Number(values.forks ?? (which === 'demo' ? 64 : which === 'plan' ? 500 : 2));
const dir = mkdtempSync(join(tmpdir(), 'fc-bench-int-'));
const parent = {
  ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
  tools: TOOL_DECLARATIONS,
};

function planArgs(): string[] {
  const files = Array.from({ length: forks }, (_, i) => `f${String(i + 1).padStart(3, '0')}.ts`);
  for (const f of files) writeFileSync(join(dir, f), `export const v = fetchData('${f}');\n`);
  const bash = which === 'bash';
  writeFileSync(
    join(dir, 'plan.json'),
    JSON.stringify({
      parent,
      directives: bash
        ? Array.from({ length: forks }, () => 'run `sleep 60` and report')
        : files.map((f) => `rename fetchData to loadData in ${f}`),
      workspace: '.',
      runsDir: 'runs',
      ...(bash ? { allow: ['bash'] } : {}),
      emulator: { script: 'refactor', latency: bash ? 'off' : values.latency },
    }),
  );
  return ['run', join(dir, 'plan.json'), '--json', '--api', 'emulator'];
}

const args = which === 'demo' ? ['demo', '--forks', String(forks), '--latency', values.latency, '--json'] : planArgs();
const child = spawn(process.execPath, [join(ROOT, 'bin/forkcache.js'), ...args], {
  cwd: dir,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, ANTHROPIC_API_KEY: '' },
});
let stdout = '';
let stderr = '';
child.stdout.on('data', (d: Buffer) => (stdout += d));
// --json progress is plain lines on stderr: `<fork> started`, `<fork> completed after …`
const ready = new Promise<void>((resolve) => {
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
    const ended = (stderr.match(/ completed after /g) ?? []).length;
    if (which !== 'bash' && ended >= forks / 2) resolve();
  });
});
// the bash case: once every fork's transcript shows its bash call started
const bashStarted = (): number => {
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
if (which === 'bash') while (bashStarted() < forks) await new Promise((r) => setTimeout(r, 20));
else await ready;
const t0 = performance.now();
child.kill('SIGINT');
if (values.twice) child.kill('SIGINT');
const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
const ms = performance.now() - t0;
const summary = stdout.trim().split('\n').at(-1) ?? '';
console.log(
  JSON.stringify({
    case: which,
    forks,
    ...(which === 'bash' ? {} : { latency: values.latency }),
    signals: values.twice ? 2 : 1,
    exit: code,
    ms_to_exit: Math.round(ms),
    grace_timer_fired: stderr.includes('stopping the forks that are still running'),
    summary_printed: summary.includes('"interrupted":true'),
    resume_line: /— resume with: forkcache resume \//.test(stderr),
  }),
);
