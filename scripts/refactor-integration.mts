// Issue 42: a new user's run of the README's refactor flow on a TypeScript project, with `tsc` as
// the integration check. The project: FORKS files under src/, one exporting a function and
// every other importing and calling it, so the rename spans files and no fork's worktree
// type-checks alone (its file holds its half of the rename). The per-fork check `plan` writes
// is marked local (advisory, `--check-local`); the integration check type-checks the merged
// tree. The commands are the README's (`forkcache plan`, `forkcache run`), on the embedded
// emulator (no API key). It prints one JSON line of figures:
//
//   forks integrated / left out, the run's exit code, integration check runs and fix-up rounds,
//   tsc on the integration branch (run again here), wall time, cost, cache figures
//
//   node --import tsx scripts/refactor-integration.mts [--work DIR] [--forks 300] [--sparse]
//
// The project's dev dependency is this package's `typescript`, copied into the project's own
// node_modules (git-ignored), so it needs no install and no network; the integration check is
// `npx tsc --noEmit -p .` under the default sandbox (`auto`: bubblewrap where it works), which
// shows the checkout's node_modules read-only to the check (`checkDependencies`, docs/plans.md).
// Timings are of one run on this machine: compare them as ratios.
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { git, SCRIPT_ENV } from './script-env.mts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/forkcache.js');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const WORK = arg('work') ?? mkdtempSync(join(tmpdir(), 'fc-integration-'));
const FORKS = Number(arg('forks') ?? 300);
const SPARSE = process.argv.includes('--sparse');

const ENV = SCRIPT_ENV;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** `forkcache ARGS` as a user runs it (bin/forkcache.js), in `cwd`. */
function forkcache(args: string[], cwd: string): Promise<Ran> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: ENV });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 })),
  );
}

const lastJson = (stdout: string): Record<string, any> =>
  JSON.parse(
    stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .at(-1)!,
  ) as Record<string, any>;

/** The project: src/format.ts exports formatName; src/mNNN.ts import and call it; strict tsc over src/. */
function project(): string {
  const repo = join(WORK, 'project');
  rmSync(repo, { recursive: true, force: true });
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(
    join(repo, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'es2022',
          module: 'esnext',
          moduleResolution: 'bundler',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(join(repo, '.gitignore'), 'node_modules/\n');
  writeFileSync(
    join(repo, 'src/format.ts'),
    'export function formatName(first: string, last: string): string {\n  return `${last}, ${first}`;\n}\n',
  );
  for (let i = 1; i < FORKS; i++) {
    const n = String(i).padStart(3, '0');
    writeFileSync(
      join(repo, `src/m${n}.ts`),
      `import { formatName } from './format';\n\n// the label of record ${n}\nexport function label${n}(first: string, last: string): string {\n  return formatName(first, last).toUpperCase();\n}\n`,
    );
  }
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'a TypeScript project');
  // its dev dependency, installed as npm would (ignored by git): typescript and its .bin/tsc
  cpSync(join(ROOT, 'node_modules/typescript'), join(repo, 'node_modules/typescript'), { recursive: true });
  mkdirSync(join(repo, 'node_modules/.bin'));
  symlinkSync('../typescript/bin/tsc', join(repo, 'node_modules/.bin/tsc'));
  return repo;
}

const repo = project();
const TSC = join(repo, 'node_modules/.bin/tsc');
const tscBase = execFileSync(TSC, ['--noEmit', '-p', '.'], { cwd: repo, encoding: 'utf8' });
const check = 'npx tsc --noEmit -p .';
const planPath = join(WORK, 'plan.json');
const planArgs = [
  'plan',
  '--workspace',
  repo,
  '--files',
  'src/**/*.ts',
  '--grep',
  '\\bformatName\\b',
  '--isolation',
  'worktree',
  ...(SPARSE ? ['--sparse'] : []),
  '--directive',
  'rename formatName to displayName in {file}',
  '--integration-check',
  check,
  '--check-local',
  '--out',
  planPath,
];
const planned = await forkcache(planArgs, repo);
if (planned.code !== 0) throw new Error(`forkcache plan: exit ${planned.code}: ${planned.stderr}`);
// the plan as `plan` wrote it: the default sandbox
const plan = JSON.parse(readFileSync(planPath, 'utf8')) as Record<string, any>;
const ran = await forkcache(['run', planPath, '--json'], repo);
const s = ran.stdout.includes('{') ? lastJson(ran.stdout) : undefined;
const integration = s?.['integration'] as Record<string, any> | undefined;
const branch = integration?.['repos']?.[0]?.['branch'] as string | undefined;

// the integration branch, type-checked again here in a worktree of its own
let tscOnBranch: string = 'no branch';
if (branch) {
  const tree = join(WORK, 'branch-check');
  rmSync(tree, { recursive: true, force: true });
  git(repo, 'worktree', 'add', '-q', '--detach', tree, branch);
  try {
    execFileSync(TSC, ['--noEmit', '-p', '.'], { cwd: tree, encoding: 'utf8' });
    tscOnBranch = 'passes';
  } catch (err) {
    tscOnBranch = `fails: ${String((err as { stdout?: string }).stdout ?? err).slice(0, 300)}`;
  }
  git(repo, 'worktree', 'remove', '--force', tree);
}
const left = (name: string, ref: string): number => {
  try {
    return git(repo, 'grep', '-lw', name, ref, '--', 'src').split('\n').length;
  } catch {
    return 0;
  }
};
const runs = join(WORK, '.forkcache/runs');
const runDirs = existsSync(runs) ? readdirSync(runs).filter((d) => existsSync(join(runs, d, 'manifest.json'))) : [];
console.log(
  JSON.stringify({
    figure: 'refactor-integration',
    commands: [
      `forkcache ${planArgs.map((a) => (/[\s\\*{}]/.test(a) ? `'${a}'` : a)).join(' ')}`,
      `forkcache run ${planPath}`,
    ],
    files: FORKS,
    tsc_on_base: tscBase.trim() === '' ? 'passes' : tscBase.trim(),
    plan_check: plan['check'] ?? null,
    plan_check_local: plan['checkLocal'] ?? null,
    sandbox: plan['sandbox'] ?? 'auto',
    sparse: plan['sparse'] ?? false,
    forks: s?.['forks']?.['total'] ?? null,
    end_statuses: s
      ? (s['fork_results'] as Array<{ end_status?: string; status: string }>).reduce<Record<string, number>>(
          (n, f) => ((n[f.end_status ?? f.status] = (n[f.end_status ?? f.status] ?? 0) + 1), n),
          {},
        )
      : null,
    integrated: integration?.['integrated'] ?? null,
    left_out: integration?.['left_out'] ?? null,
    passed: integration?.['passed'] ?? null,
    check_runs: integration?.['check_runs'] ?? null,
    fixup_rounds: integration?.['fixup_rounds'] ?? null,
    exit: ran.code,
    tsc_on_integration_branch: tscOnBranch,
    old_name_left_on_branch: branch ? left('formatName', branch) : null,
    new_name_files_on_branch: branch ? left('displayName', branch) : null,
    run_seconds: Number(ran.seconds.toFixed(1)),
    cost_usd: s?.['cost_usd'] ?? null,
    cache: s?.['cache'] ?? s?.['tokens'] ?? null,
    run_directories: runDirs.length,
    stderr_tail: ran.stderr.trim().split('\n').slice(-3),
  }),
);
