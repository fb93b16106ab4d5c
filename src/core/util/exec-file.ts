import { execFile, spawn, type ChildProcess } from 'node:child_process';

/*
 * Run a program and collect its output, through one small helper process per thread.
 *
 * Node starts a child with fork() (libuv, on every Node release this package supports), and a
 * fork copies the parent's page tables while the calling thread waits: the longer the process'
 * memory, the longer each start blocks the event loop. An engine process with its worker threads
 * and the emulator holds 300-400 MB, where one `git` start blocked the main thread 25-30 ms
 * (against 6 ms for a 50 MB process): a 12-fork run spent 6 s of its 14 s inside `spawn`,
 * measured with `--cpu-prof`; a run of hundreds of forks starts thousands of git commands.
 * So the programs forkcache runs by the hundred (git, rm, mkfs, mount) are started by a helper:
 * a bare `node -e` of the script below, about 40 MB, started once and left running while the
 * thread lives. It gets nothing of this process' environment (each call carries the environment
 * its program gets, exactly what `execFile` would have been given) and no `execArgv`.
 *
 * A call the helper cannot take (it could not start, or it exited: a signal to the process
 * group) is run with `execFile` here instead, and the next call starts a new helper. A call in
 * flight when the helper died ends as a program killed by that signal would have.
 */

/** What `execFile` reports, as data: a non-zero `code` or a `signal` is an answer, not a throw. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  /** The exit code; null when a signal ended the program, or it could not be started. */
  code: number | null;
  signal: string | null;
  /** Why the program could not run or was cut short (ENOENT, maxBuffer), when that is so. */
  error?: { message: string; code?: string | undefined } | undefined;
}

export interface ExecOptions {
  cwd?: string | undefined;
  /** The program's whole environment; default this process' (as `execFile`). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Written to the program's standard input, which is then closed (closed at once without it). */
  input?: string | undefined;
  /** Bytes of stdout or stderr past which the program is killed (`execFile`'s maxBuffer; default 256 MiB). */
  maxBuffer?: number | undefined;
}

interface Request {
  id: number;
  file: string;
  args: readonly string[];
  cwd: string | undefined;
  env: NodeJS.ProcessEnv;
  input: string | undefined;
  maxBuffer: number;
}

type Reply = ExecResult & { id: number };

const DEFAULT_MAX_BUFFER = 256 * 1024 * 1024;

/**
 * The helper, plain CommonJS for `node -e`. It runs each request as `execFile` would have here
 * and sends the result back. It ignores the signals a terminal sends the whole process group
 * (the programs it started get them as before) and exits once its parent is gone.
 */
const HELPER = `
const { execFile } = require('node:child_process');
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) process.on(s, () => {});
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  let child;
  try {
    child = execFile(m.file, m.args, { cwd: m.cwd, env: m.env, maxBuffer: m.maxBuffer, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      const error = err && typeof err.code !== 'number' ? { message: err.message, code: err.code } : undefined;
      if (process.connected) process.send({ id: m.id, stdout, stderr, code, signal: (err && err.signal) || null, error });
    });
  } catch (err) {
    if (process.connected) process.send({ id: m.id, stdout: '', stderr: '', code: null, signal: null, error: { message: err.message, code: err.code } });
    return;
  }
  if (child.stdin) {
    child.stdin.on('error', () => {});
    child.stdin.end(m.input === undefined ? undefined : m.input);
  }
});
`;

interface Helper {
  child: ChildProcess;
  pending: Map<number, (reply: Reply) => void>;
}

let helper: Helper | undefined;
let nextId = 1;

function startHelper(): Helper | undefined {
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, ['-e', HELPER], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: { PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin' },
    });
  } catch {
    return undefined;
  }
  const started: Helper = { child, pending: new Map() };
  child.on('message', (reply: Reply) => {
    const settle = started.pending.get(reply.id);
    if (!settle) return;
    started.pending.delete(reply.id);
    settle(reply);
    idle(started);
  });
  const gone = (why: string): void => {
    if (helper === started) helper = undefined;
    for (const settle of started.pending.values())
      settle({ id: 0, stdout: '', stderr: '', code: null, signal: 'SIGKILL', error: { message: why } });
    started.pending.clear();
  };
  child.on('error', (err) => gone(`the program runner failed: ${err.message}`));
  child.on('exit', (code, signal) => gone(`the program runner exited (${signal ?? `code ${code}`})`));
  idle(started);
  return started;
}

/** The helper keeps this process alive only while a call is in flight. */
function idle(h: Helper): void {
  const channel = h.child.channel as { ref(): void; unref(): void } | undefined | null;
  if (h.pending.size === 0) {
    h.child.unref();
    channel?.unref();
  } else {
    h.child.ref();
    channel?.ref();
  }
}

/** `execFile` in this process: the fallback when the helper cannot take a call. */
function execHere(file: string, args: readonly string[], o: ExecOptions): Promise<ExecResult> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = execFile(
        file,
        [...args],
        { cwd: o.cwd, env: o.env, maxBuffer: o.maxBuffer ?? DEFAULT_MAX_BUFFER, encoding: 'utf8' },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
          const error =
            err && typeof err.code !== 'number' ? { message: err.message, code: err.code ?? undefined } : undefined;
          resolve({ stdout, stderr, code, signal: err?.signal ?? null, error });
        },
      );
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      resolve({ stdout: '', stderr: '', code: null, signal: null, error: { message: e.message, code: e.code } });
      return;
    }
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(o.input);
  });
}

/** Run `file` with `args` to its end and collect its output (never throws: see ExecResult). */
export function execFileText(file: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  const h = helper ?? (helper = startHelper());
  if (!h || !h.child.connected) return execHere(file, args, options);
  const request: Request = {
    id: nextId++,
    file,
    args,
    cwd: options.cwd,
    env: { ...(options.env ?? process.env) },
    input: options.input,
    maxBuffer: options.maxBuffer ?? DEFAULT_MAX_BUFFER,
  };
  return new Promise((resolve) => {
    h.pending.set(request.id, ({ id: _id, ...result }) => resolve(result));
    idle(h);
    try {
      h.child.send(request);
    } catch {
      h.pending.delete(request.id);
      idle(h);
      resolve(execHere(file, args, options));
    }
  });
}
