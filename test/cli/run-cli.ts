import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FORK_END_STATUSES } from '../../src/core/util/fork-status.ts';
import { tsxLoaderUrl } from '../../src/core/pool/worker-file.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { CLI_BUNDLE_MAIN } from '../setup/built-sources.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What every run of the command gets over this process's environment. */
const BASE_ENV = { NO_COLOR: '1', ANTHROPIC_API_KEY: undefined };

/**
 * Run the `forkcache` command in this process: `main` (src/cli/cli-main.ts) with `env` over
 * this process's environment and the standard streams captured, one run at a time. The same
 * code as the process entry, without a node process and a module graph loaded per call (about
 * 1.5 s each on a 2-core machine). Tests of signals, crashes, locks held by two runs at once,
 * the key's reach into a process' environment, or another working directory use
 * `forkcacheProcess`.
 *
 * `main` comes from the suite's JavaScript build of the sources when there is one (what the
 * spawned commands run, `cliArgs`): Node loads the `run` command's module graph from it in
 * about a quarter of the CPU vitest's transform of the same sources takes (1.0 s against 3.7 s
 * a file). The command's modules are then not the ones the test file imports (an emulator
 * started by the test is another instance, reached over HTTP as the command reaches any).
 */
export function forkcache(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  const run = inProcessQueue.then(() => runInProcess(args, { ...BASE_ENV, ...env }));
  inProcessQueue = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

let inProcessQueue: Promise<void> = Promise.resolve();

type Main = (args: readonly string[]) => Promise<number>;

async function loadMain(): Promise<Main> {
  const built = process.env['FORKCACHE_BUILT_SOURCES'];
  if (built) return ((await import(pathToFileURL(join(built, 'src/cli/cli-main.js')).href)) as { main: Main }).main;
  return (await import('../../src/cli/cli-main.ts')).main;
}

async function runInProcess(args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  const main = await loadMain();
  const saved = new Map(Object.keys(env).map((key) => [key, process.env[key]]));
  for (const [key, value] of Object.entries(env)) setEnv(key, value);
  const out = { stdout: '', stderr: '' };
  const restore = [
    capture(process.stdout, (s) => (out.stdout += s)),
    capture(process.stderr, (s) => (out.stderr += s)),
  ];
  try {
    const code = await main(args);
    return { code, ...out };
  } finally {
    for (const undo of restore) undo();
    for (const [key, value] of saved) setEnv(key, value);
  }
}

function setEnv(key: string, value: string | undefined): void {
  if (value === undefined) delete process.env[key];
  else process.env[key] = value;
}

/** Send what `stream` is written to `sink` until the returned function is called. */
function capture(stream: NodeJS.WriteStream, sink: (text: string) => void): () => void {
  const original = stream.write;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = rest.find((arg): arg is () => void => typeof arg === 'function');
    done?.();
    return true;
  }) as typeof stream.write;
  return () => {
    stream.write = original;
  };
}

/** Run the real `forkcache` command (`cliArgs`, in the package root) in a child process. */
export function forkcacheProcess(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  return runNode(cliArgs(...args), { cwd: ROOT, env: { ...BASE_ENV, ...env } });
}

/**
 * The node arguments that start the real `forkcache` command with `args`, from any directory:
 * the suite's JavaScript build of the sources, its bundle of the command (test/setup/global-build.ts
 * names the build in `FORKCACHE_BUILT_SOURCES`), which starts in a fraction of what the tsx
 * loader costs a process, or the sources through tsx when the file runs without that setup. Tests of source
 * mode itself (tsx in the process) spawn `sourceCliArgs`.
 */
export function cliArgs(...args: string[]): string[] {
  const built = process.env['FORKCACHE_BUILT_SOURCES'];
  return built ? [join(built, CLI_BUNDLE_MAIN), ...args] : sourceCliArgs(...args);
}

/** The node arguments that run the command from its TypeScript sources through tsx, as `npm run forkcache` does. */
export function sourceCliArgs(...args: string[]): string[] {
  return ['--import', tsxLoaderUrl(), join(ROOT, 'src/cli/main.ts'), ...args];
}

/** Run `node ARGS` in `cwd` with `env` over this process's, collecting its output. */
export function runNode(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<RunResult> {
  return runProgram(process.execPath, args, options);
}

/** Run `COMMAND ARGS` (a script through `bash`, say) as `runNode` runs node. */
export function runProgram(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The last line of stdout as JSON (`--json` prints one summary object last). */
export function lastJson<T = Record<string, any>>(stdout: string): T {
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}

/** The first stdout line of a child (a server's listening line), without timers: resolves on data or exit. */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing a line`)));
  });
}

/** The `forks` counts of a summary in which all `n` forks completed (every status named, zeros included). */
export function allCompleted(n: number): Record<string, number> {
  return { total: n, ...Object.fromEntries(FORK_END_STATUSES.map((s) => [s, s === 'completed' ? n : 0])) };
}

/** The example plan's parent request, with the real tool declarations (plans of CLI tests embed it). */
export function exampleParent(): Record<string, unknown> {
  const parent = JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>;
  return { ...parent, tools: TOOL_DECLARATIONS };
}

/**
 * A copy of examples/plan/plan.json in a fresh temporary folder, with absolute paths to the
 * example's parent and workspace and its run directory inside that folder (a test never writes
 * into the checkout). Returns the plan's path and its folder.
 */
export function examplePlan(extra: Record<string, unknown> = {}): { path: string; dir: string } {
  const plan = JSON.parse(readFileSync(join(ROOT, 'examples/plan/plan.json'), 'utf8')) as Record<string, unknown>;
  const dir = mkdtempSync(join(tmpdir(), 'fc-example-plan-'));
  const path = join(dir, 'plan.json');
  const body = {
    ...plan,
    parent: join(ROOT, 'examples/plan/parent.json'),
    workspace: join(ROOT, 'examples/sample-repo'),
    runsDir: join(dir, 'runs'),
    ...extra,
  };
  writeFileSync(path, JSON.stringify(body));
  return { path, dir };
}
