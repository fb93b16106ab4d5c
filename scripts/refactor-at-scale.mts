// The refactor flow of docs/plans.md and docs/review.md at real size, on a repository nobody
// here wrote: the rxjs 7.8.1 package from `npm pack` (2,277 files, 251 TypeScript files under
// src/) as a one-commit git repository, on the embedded emulator (no API key), with the
// commands a user reads in the README. It prints one JSON line per figure:
//
//   typo       a rename of a name that is in no file: exit code, forks counted no_change
//   merge      two renames meeting on the same import lines (ObservableInput, OperatorFunction):
//              one `merge --clean-only`, the retry plan run and merged, the tree against the
//              shared-workspace run of the same plan
//   cap        --max-usd at 30% of the dry run's estimate: spent / cap, and the printed
//              continue command run as printed
//   interrupt  Ctrl-C (typed into a real pseudo-terminal once the board counts FORKS/3 forks
//              ended) at FORKS worktree forks: lines printed after it, the last one
//   disk       FORKS worktree forks, sparse (one rename per file) and whole (each fork rewrites
//              a directory with sed): peak of repository + run directory against the
//              repository, the run's time and `clean`'s
//
//   node --import tsx scripts/refactor-at-scale.mts [--work DIR] [--forks 300] [--only typo,merge,…]
//                                                   [--modes sparse,whole] [--print-ending]
//
// Needs the npm registry once (npm pack), git, bash, and `script` (util-linux) for the
// interrupt. Timings are of one run on this machine: compare them as ratios.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
const WORK = arg('work') ?? mkdtempSync(join(tmpdir(), 'fc-scale-'));
const FORKS = Number(arg('forks') ?? 300);
const ONLY = new Set((arg('only') ?? 'typo,merge,cap,interrupt,disk').split(','));
const TARBALL = join(WORK, 'rxjs-7.8.1.tgz');

const ENV = SCRIPT_ENV;

const figure = (name: string, values: Record<string, unknown>): void =>
  console.log(JSON.stringify({ figure: name, ...values }));

/** The package's files as a one-commit repository at WORK/NAME, a fresh copy each time. */
function freshRepo(name: string): string {
  const repo = join(WORK, name);
  rmSync(repo, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  execFileSync('tar', ['xzf', TARBALL, '-C', repo, '--strip-components', '1']);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'npm pack rxjs@7.8.1');
  return repo;
}

/** Kilobytes under these paths, as `du -sk` counts them (a path removed while it counts is skipped). */
function du(paths: string[]): number {
  let out: string;
  try {
    out = execFileSync('du', ['-sk', ...paths.filter(existsSync)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  }
  return out.split('\n').reduce((sum, line) => sum + (Number(line.split('\t')[0]) || 0), 0);
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
  /** With `watch`: the peak of `du` over those paths while the command ran, in kilobytes. */
  peakKb: number;
}

/** `forkcache ARGS` as a user runs it (bin/forkcache.js), optionally sampling `du` of `watch` while it runs. */
function forkcache(args: string[], options: { cwd?: string; watch?: string[] } = {}): Promise<Ran> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? WORK, env: ENV });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peakKb = 0;
  let done = false;
  const sample = async (): Promise<void> => {
    while (!done && options.watch) {
      peakKb = Math.max(peakKb, du(options.watch));
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const sampling = sample();
  return new Promise((resolve) =>
    child.on('close', (code) => {
      done = true;
      void sampling.then(() =>
        resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000, peakKb }),
      );
    }),
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

/** `forkcache plan` over `files` of `repo` with one directive (`extra`: the other flags). */
async function plan(
  name: string,
  repo: string,
  files: string,
  directive: string,
  extra: string[] = [],
): Promise<{ path: string; json: Record<string, any> }> {
  const args = ['--workspace', repo, '--files', files, ...extra, '--directive', directive];
  const path = join(WORK, `${name}.json`);
  const made = await forkcache(['plan', ...args, '--out', path]);
  if (made.code !== 0) throw new Error(`forkcache plan ${args.join(' ')}: ${made.stderr}`);
  return { path, json: JSON.parse(readFileSync(path, 'utf8')) as Record<string, any> };
}

const writeJson = (path: string, value: unknown): string => (writeFileSync(path, JSON.stringify(value, null, 2)), path);

const fanOutDirs = (runs: string): string[] =>
  existsSync(runs)
    ? readdirSync(runs)
        .filter((d) => existsSync(join(runs, d, 'manifest.json')))
        .sort()
        .map((d) => join(runs, d))
    : [];

if (!existsSync(TARBALL)) execFileSync('npm', ['pack', '--silent', 'rxjs@7.8.1'], { cwd: WORK, stdio: 'ignore' });
const probe = freshRepo('probe');
const repoKb = du([probe]);
figure('repository', {
  files: Number(git(probe, 'ls-files').split('\n').length),
  ts_under_src: git(probe, 'ls-files', 'src/*.ts').split('\n').length,
  kb_with_git: repoKb,
  work: WORK,
});

// 1. A rename of a name that is in no file: the README's plan command with a typo in the
// identifier, every TypeScript file under src/.
if (ONLY.has('typo')) {
  const repo = freshRepo('typo');
  const p = await plan('typo-plan', repo, 'src/**/*.ts', 'rename isFuncton to isFn in {file}', [
    '--isolation',
    'worktree',
  ]);
  const runs = join(WORK, '.forkcache/runs');
  rmSync(runs, { recursive: true, force: true });
  const ran = await forkcache(['run', p.path, '--json'], { watch: [repo, runs] });
  const s = lastJson(ran.stdout);
  const base = git(repo, 'rev-parse', 'HEAD');
  const branches = git(repo, 'for-each-ref', '--format=%(objectname)', 'refs/heads/forkcache/').split('\n');
  figure('typo', {
    command: `forkcache run ${p.path}`,
    exit: ran.code,
    forks: s['forks'].total,
    no_change: s['forks'].no_change,
    branches_moved: branches.filter((c) => c && c !== base).length,
    summary_no_change: s['no_change'],
    seconds: Number(ran.seconds.toFixed(1)),
    peak_over_repository: Number((ran.peakKb / repoKb).toFixed(2)),
  });
  rmSync(runs, { recursive: true, force: true });
}

// 2. Two renames that meet on the same import lines (`import { ObservableInput,
// OperatorFunction } from '../types'`), one plan: shared workspace against worktrees + merge.
if (ONLY.has('merge')) {
  const renames = [
    ['ObservableInput', 'ObservableSource'],
    ['OperatorFunction', 'OperatorFn'],
  ] as const;
  const both = async (repo: string, isolation: string): Promise<string> => {
    const parts = [];
    for (const [from, to] of renames)
      parts.push(
        await plan(`merge-${isolation}-${from}`, repo, 'src/**/*.ts', `rename ${from} to ${to} in {file}`, [
          '--grep',
          `\\b${from}\\b`,
          '--isolation',
          isolation,
        ]),
      );
    // one plan: the directives of both, each with its names as fields for one check
    const directives = parts.flatMap((part, i) =>
      (part.json['directives'] as { directive: string; file: string }[]).map((d) => ({
        ...d,
        old: renames[i]![0],
        new: renames[i]![1],
      })),
    );
    return writeJson(join(WORK, `merge-${isolation}.json`), {
      ...parts[0]!.json,
      runsDir: `runs-merge-${isolation}`,
      directives,
      check: '! grep -qw {old} {file} && grep -qw {new} {file}',
    });
  };
  const shared = freshRepo('merge-shared');
  const sharedRun = await forkcache(['run', await both(shared, 'none'), '--json']);
  git(shared, 'add', '-A');
  const sharedTree = git(shared, 'write-tree');

  const repo = freshRepo('merge-worktree');
  const runs = join(WORK, 'runs-merge-worktree');
  rmSync(runs, { recursive: true, force: true });
  const planPath = await both(repo, 'worktree');
  const ran = await forkcache(['run', planPath, '--json'], { watch: [repo, runs] });
  const [first] = fanOutDirs(runs) as [string];
  const dry = await forkcache(['merge', first, '--dry-run', '--json']);
  const seen = lastJson(dry.stdout);
  const merged = await forkcache(['merge', first, '--clean-only']);
  const redo = /redo the (\d+) conflicting fork\(s\) on \S+ with: forkcache run (\S+)/.exec(merged.stdout);
  let retried: Ran | undefined;
  let finished: Ran | undefined;
  if (redo) {
    retried = await forkcache(['run', redo[2]!, '--json']);
    const second = fanOutDirs(runs).find((d) => d !== first)!;
    finished = await forkcache(['merge', second]);
  }
  const left = (name: string): number => {
    try {
      return git(repo, 'grep', '-lw', name, '--', 'src/*.ts').split('\n').length;
    } catch {
      return 0;
    }
  };
  figure('merge', {
    forks: ran.code === null ? null : lastJson(ran.stdout)['forks'].total,
    run_exit: ran.code,
    shared_run_completed: lastJson(sharedRun.stdout)['forks'].completed,
    dry_run_conflicts: (seen['conflicts'] as unknown[]).length,
    dry_run_clean: (seen['merged'] as unknown[]).length,
    clean_only_exit: merged.code,
    clean_only_seconds: Number(merged.seconds.toFixed(1)),
    retry_plan_forks: redo ? Number(redo[1]) : 0,
    retry_run_exit: retried?.code ?? null,
    final_merge_exit: finished?.code ?? null,
    equals_shared_tree: git(repo, 'rev-parse', 'HEAD^{tree}') === sharedTree,
    names_left: Object.fromEntries(renames.map(([from]) => [from, left(from)])),
    run_seconds: Number(ran.seconds.toFixed(1)),
    shared_seconds: Number(sharedRun.seconds.toFixed(1)),
    peak_over_repository: Number((ran.peakKb / repoKb).toFixed(2)),
  });
}

// 3. --max-usd at 30% of the dry run's estimate, then the continue command as printed.
if (ONLY.has('cap')) {
  const repo = freshRepo('cap');
  const p = await plan('cap-plan', repo, 'src/**/*.ts', 'rename OperatorFunction to OperatorFn in {file}', [
    '--grep',
    '\\bOperatorFunction\\b',
  ]);
  writeJson(p.path, { ...p.json, runsDir: 'runs-cap' });
  rmSync(join(WORK, 'runs-cap'), { recursive: true, force: true });
  const dry = lastJson((await forkcache(['run', p.path, '--dry-run', '--json'])).stdout);
  const estimate = dry['estimate'].cost.usd as number;
  const cap = Number((0.3 * estimate).toFixed(4));
  const ran = await forkcache(['run', p.path, '--json', '--max-usd', String(cap)]);
  const s = lastJson(ran.stdout);
  const command = /continue with: (forkcache resume \S+(?: --max-usd \S+)?)/.exec(ran.stderr)?.[1];
  let resumed: Ran | undefined;
  if (command) resumed = await forkcache([...command.split(' ').slice(1), '--json']);
  const r = resumed?.stdout.includes('{') ? lastJson(resumed.stdout) : undefined;
  figure('cap', {
    forks: s['forks'].total,
    estimate_usd: estimate,
    cap_usd: cap,
    exit: ran.code,
    spent_usd: s['cost_usd'].actual,
    spent_over_cap: Number(((s['cost_usd'].actual as number) / cap).toFixed(3)),
    capped: s['forks'].capped,
    failed: s['forks'].failed,
    continue_command: command ?? null,
    continue_exit: resumed?.code ?? null,
    continue_stderr_tail: resumed ? resumed.stderr.trim().split('\n').slice(-2) : null,
    after_continue_completed: r?.['forks']?.completed ?? null,
    whole_run_usd: r?.['cost_usd']?.actual ?? null,
  });
}

// 4. Ctrl-C at FORKS worktree forks, typed into a real pseudo-terminal once the board counts a
// third of the forks ended.
if (ONLY.has('interrupt')) {
  const { Terminal } = createRequire(import.meta.url)('@xterm/headless') as typeof import('@xterm/headless');
  const repo = freshRepo('interrupt');
  const p = await plan('interrupt-plan', repo, '**/*.ts', 'rename isFunction to isFn in {file}', [
    '--isolation',
    'worktree',
  ]);
  writeJson(p.path, { ...p.json, runsDir: 'runs-interrupt', directives: p.json['directives'].slice(0, FORKS) });
  rmSync(join(WORK, 'runs-interrupt'), { recursive: true, force: true });
  const rows = 40;
  const cols = 160;
  const quote = (w: string): string => `'${w.replaceAll("'", `'\\''`)}'`;
  const child: ChildProcess = spawn(
    'script',
    [
      '-qfec',
      `stty rows ${rows} cols ${cols} && exec ${[process.execPath, BIN, 'run', p.path].map(quote).join(' ')}`,
      '/dev/null',
    ],
    { cwd: WORK, env: ENV, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const term = new Terminal({ rows, cols, scrollback: 100_000, allowProposedApi: true });
  let raw = '';
  let typedAt = 0;
  const written: Promise<void>[] = [];
  const plain = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''); // eslint-disable-line no-control-regex
  child.stdout!.on('data', (chunk: Buffer) => {
    raw += chunk.toString('utf8');
    written.push(new Promise((r) => term.write(chunk, r)));
    const ended = [...plain(raw).matchAll(/(\d+)\/\d+ forks ended/g)].at(-1)?.[1];
    if (!typedAt && Number(ended ?? 0) >= Math.floor(FORKS / 3)) {
      typedAt = performance.now();
      child.stdin!.write('\x03');
    }
  });
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const exitedAfter = (performance.now() - typedAt) / 1000;
  await Promise.all(written);
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < buffer.length; i++) {
    const row = buffer.getLine(i);
    const text = row?.translateToString(true) ?? '';
    if (row?.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  const from = lines.findIndex((l) => l.startsWith('interrupted: cancelling'));
  const after = lines.slice(Math.max(0, from)).filter((l) => l.trim() !== '');
  figure('interrupt', {
    forks: FORKS,
    exit: code,
    typed_after_ended: Math.floor(FORKS / 3),
    lines_after_ctrl_c: from < 0 ? null : after.length,
    last_line: after.at(-1) ?? null,
    grace_ended_threads: raw.includes('interrupted: stopping the forks that are still running'),
    seconds_from_ctrl_c_to_exit: Number(exitedAfter.toFixed(2)),
    worktrees_left: existsSync(join(WORK, 'runs-interrupt'))
      ? fanOutDirs(join(WORK, 'runs-interrupt')).flatMap((d) =>
          existsSync(join(d, 'worktrees')) ? readdirSync(join(d, 'worktrees')) : [],
        ).length
      : 0,
  });
  if (process.argv.includes('--print-ending')) console.log(after.join('\n'));
}

// 5. Disk and clean at FORKS worktree forks: sparse (a rename per file, each worktree holding
// its file) and whole (each fork rewrites a directory of files with sed through bash, so no
// worktree can be sparse).
if (ONLY.has('disk')) {
  for (const mode of (arg('modes') ?? 'sparse,whole').split(',') as ('sparse' | 'whole')[]) {
    const repo = freshRepo(`disk-${mode}`);
    const before = du([repo]);
    const runs = join(WORK, `runs-disk-${mode}`);
    rmSync(runs, { recursive: true, force: true });
    const dirs = [
      ...new Set(
        git(repo, 'ls-files', 'src/*.ts')
          .split('\n')
          .map((f) => f.slice(0, f.lastIndexOf('/'))),
      ),
    ];
    const p = await plan(`disk-${mode}-plan`, repo, '**/*.ts', 'rename isFunction to isFn in {file}', [
      '--isolation',
      'worktree',
      ...(mode === 'sparse' ? ['--sparse'] : []),
    ]);
    const directives =
      mode === 'sparse'
        ? p.json['directives'].slice(0, FORKS)
        : Array.from(
            { length: FORKS },
            (_, i) => `run \`sed -i '1i // fork ${i + 1}' ${dirs[i % dirs.length]}/*.ts\` and report`,
          );
    writeJson(p.path, {
      ...p.json,
      runsDir: `runs-disk-${mode}`,
      directives,
      ...(mode === 'whole' ? { allow: ['read_file', 'bash'], check: undefined } : {}),
    });
    const ran = await forkcache(['run', p.path, '--json'], { watch: [repo, runs] });
    const s = lastJson(ran.stdout);
    // files each fork changed, from its branch (the run's base is the repository's HEAD)
    const base = git(repo, 'rev-parse', 'HEAD');
    const tips = git(repo, 'for-each-ref', '--format=%(objectname)', 'refs/heads/forkcache/')
      .split('\n')
      .filter(Boolean);
    const changed = tips.map((tip) => git(repo, 'diff', '--name-only', base, tip).split('\n').filter(Boolean).length);
    const touched = changed.reduce((a, b) => a + b, 0) / Math.max(1, changed.length);
    const cleaned = await forkcache(['clean', runs, '--force']);
    figure('disk', {
      mode,
      forks: s['forks'].total,
      completed: s['forks'].completed,
      files_per_fork: Number(touched.toFixed(1)),
      repository_kb: before,
      peak_kb: ran.peakKb,
      peak_over_repository: Number((ran.peakKb / before).toFixed(2)),
      run_seconds: Number(ran.seconds.toFixed(1)),
      clean_exit: cleaned.code,
      clean_seconds: Number(cleaned.seconds.toFixed(1)),
      clean_over_run: Number((cleaned.seconds / ran.seconds).toFixed(3)),
    });
  }
}
