import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/*
 * Run a program and collect its output, through one small helper process per thread.
 *
 * Node starts a child with fork() (libuv, on every Node release this package supports), and a
 * fork copies the parent's page tables while the calling thread waits: the longer the process'
 * memory, the longer each start blocks. An engine process with its worker threads and the
 * emulator holds 300-400 MB, where one `git` start blocked the main thread 25-30 ms (against
 * 6 ms for a 50 MB process): a 12-fork run spent 6 s of its 14 s inside `spawn`, measured with
 * `--cpu-prof`; a run of hundreds of forks starts thousands of git commands. A worker thread's
 * fork copies the whole process too (an engine embedded in a worker thread, as under a test
 * runner's threads, paid 30-35 ms a start in a 1.3-1.5 GB process).
 * So the programs forkcache runs by the hundred (git, rm, mkfs, mount) are started by a helper:
 * a bare `node -e` of the script below, about 45 MB, started on the thread's first call and left
 * running while the thread lives, never keeping it alive. It gets nothing of this process'
 * environment (each call carries the environment its program gets, exactly what `execFile`
 * would have been given) and no `execArgv`.
 *
 * The helper is started by `sh` in the background, and `sh` exits at once: the helper is no
 * child of this process (its parent is the system's, which reaps it), so a worker thread that
 * ends leaves no zombie behind (a thread's own children are reaped by its event loop, which is
 * gone; where nothing reaps orphans, a container whose PID 1 is no init, each ended helper stays
 * a zombie until the container ends: run such a container with `--init`). It talks on the
 * channel `sh` passed on, and exits when the channel closes: when the thread or the process
 * ends, whichever way. It stays in this process' group, so a terminal's
 * signals reach it as before (it ignores them; the programs it starts get them).
 *
 * A call the helper cannot take (it could not start, or it is gone) runs with `execFile` here
 * instead, and the next call starts a new helper. When the helper dies with calls in flight
 * (SIGKILL, or a crash), their programs are killed and the calls end as killed by SIGKILL.
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
  cwd: string;
  env: NodeJS.ProcessEnv;
  input: string | undefined;
  maxBuffer: number;
}

/** From the helper: it is up (its pid), the program of call `id` started as `pid`, or it ended with `result`. */
type Message = { ready: number } | { id: number; pid: number } | { id: number; result: ExecResult };

const DEFAULT_MAX_BUFFER = 256 * 1024 * 1024;

/**
 * An environment of PATH alone (the usual one when this process has none): for the programs that
 * must see nothing of this process' environment (its key), the helper itself included.
 */
export function pathOnlyEnv(): { PATH: string } {
  return { PATH: process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin' };
}

/**
 * Why a call did not succeed, in one line: the last three lines of its stderr, else why it could
 * not run (ENOENT, maxBuffer), the signal that ended it, or its exit code.
 */
export function whyFailed(result: ExecResult): string {
  return (
    result.stderr.trim().split('\n').slice(-3).join(' / ') ||
    // a program a signal ended has an error too, "Command failed", which says less than the signal
    (result.error?.code ? result.error.message : undefined) ||
    (result.signal ? `killed by ${result.signal}` : undefined) ||
    result.error?.message ||
    `exit code ${result.code ?? 'none'}`
  );
}

/**
 * Run a probe once, synchronously (does bubblewrap, a PID namespace, a loop mount work here?):
 * undefined when it exits 0, else why not in one line (its first line of stderr, else why it
 * could not run, the signal that ended it, or its exit code). It sees `env` only, PATH alone by
 * default, and is killed after 30 s. Probes run once per process, so the helper is not needed.
 */
export function probeProgram(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = pathOnlyEnv(),
): string | undefined {
  const result = spawnSync(file, args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
  if (result.status === 0) return undefined;
  return (
    (result.stderr?.toString('utf8') ?? '')
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ||
    result.error?.message ||
    (result.signal ? `killed by ${result.signal}` : `exit code ${result.status ?? 'none'}`)
  );
}

/**
 * The helper, plain CommonJS for `node -e`. It says it is up, runs each request as `execFile`
 * would have here, says the program's pid once it started and sends the result back. It ignores
 * the signals a terminal sends the whole process group (the programs it started get them as
 * before: a child starts with every signal's default) and exits once its channel is closed.
 * Messages are JSON: every field is a string, a number or null.
 */
const HELPER = `
const { execFile } = require('node:child_process');
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) process.on(s, () => {});
process.on('disconnect', () => process.exit(0));
const send = (m) => process.connected && process.send(m);
send({ ready: process.pid });
process.on('message', (m) => {
  let child;
  try {
    child = execFile(m.file, m.args, { cwd: m.cwd, env: m.env, maxBuffer: m.maxBuffer, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      const error = err && typeof err.code !== 'number' ? { message: err.message, code: err.code } : undefined;
      send({ id: m.id, result: { stdout, stderr, code, signal: (err && err.signal) || null, error } });
    });
  } catch (err) {
    send({ id: m.id, result: { stdout: '', stderr: '', code: null, signal: null, error: { message: err.message, code: err.code } } });
    return;
  }
  if (child.pid !== undefined) send({ id: m.id, pid: child.pid });
  if (child.stdin) {
    child.stdin.on('error', () => {});
    child.stdin.end(m.input === undefined ? undefined : m.input);
  }
});
`;

interface Call {
  request: Request;
  options: ExecOptions;
  resolve(result: ExecResult): void;
  /** The program's pid, once the helper said it started. */
  pid?: number;
}

interface Helper {
  /** The `sh` that started the helper (gone at once), and the channel to the helper. */
  child: ChildProcess;
  calls: Map<number, Call>;
  /** The helper process is running (it said so). */
  running: boolean;
  /** It failed or exited: it takes no more calls. */
  dead: boolean;
  /** Why it failed, once an error came (its calls in flight are settled when the channel closes). */
  failed?: string;
}

let helper: Helper | undefined;
let nextId = 1;

function startHelper(): Helper | undefined {
  let child: ChildProcess;
  try {
    // `sh` passes the channel (fd 3, NODE_CHANNEL_FD) on to the helper it starts, and exits
    // (PWD, which `sh` sets, is taken out: the helper's environment is PATH and its channel)
    child = spawn('/bin/sh', ['-c', 'unset PWD; "$0" -e "$1" &', process.execPath, HELPER], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      // JSON, not 'advanced': the advanced reader of Node 20 before 20.19 and 22 before 22.14
      // stops delivering messages when a read ends inside a length header (nodejs/node#55834)
      serialization: 'json',
      env: pathOnlyEnv(),
    });
  } catch {
    return undefined;
  }
  const h: Helper = { child, calls: new Map(), running: false, dead: false };
  child.on('message', (m: Message) => {
    if ('ready' in m) {
      h.running = true;
      return;
    }
    const call = h.calls.get(m.id);
    if (!call) return;
    if ('pid' in m) {
      call.pid = m.pid;
      return;
    }
    h.calls.delete(m.id);
    call.resolve(m.result);
    idle(h);
  });
  // A failed start or send (EPIPE to a helper that died) comes before the messages still in the
  // channel are read: its `ready` and the pids of programs it started among them. So an error
  // only stops new calls here; the channel's close, which comes after those messages, settles
  // the calls in flight (a call the helper started must never be run again here).
  child.on('error', (err) => {
    h.failed ??= `the program runner failed: ${err.message}`;
    if (helper === h) helper = undefined;
    if (!child.connected) gone(h, h.failed);
  });
  // the channel closed: the helper exited, or never started (`sh` could not run it)
  child.on('disconnect', () => gone(h, h.failed ?? 'the program runner exited'));
  idle(h);
  return h;
}

/**
 * The helper failed or exited. A call that never reached it (the helper never started) runs
 * here instead; a call whose program it started has that program killed, and ends as a program
 * killed by SIGKILL.
 */
function gone(h: Helper, why: string): void {
  if (h.dead) return;
  h.dead = true;
  if (helper === h) helper = undefined;
  for (const call of h.calls.values()) {
    if (!h.running) {
      void execHere(call.request.file, call.request.args, call.options).then(call.resolve);
      continue;
    }
    if (call.pid !== undefined) {
      try {
        process.kill(call.pid, 'SIGKILL');
      } catch {
        // it ended meanwhile
      }
    }
    call.resolve({
      stdout: '',
      stderr: '',
      code: null,
      signal: 'SIGKILL',
      error: { message: `${why}; the program was killed` },
    });
  }
  h.calls.clear();
  // a helper that is still there exits when its channel closes
  if (h.child.connected) h.child.disconnect();
  idle(h);
}

/** The helper keeps this process alive only while a call is in flight. */
function idle(h: Helper): void {
  const channel = h.child.channel as { ref(): void; unref(): void } | undefined | null;
  if (h.calls.size === 0 || h.dead) {
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

/** Run `file` with `args` to its end and collect its output, through this thread's helper (never throws: see ExecResult). */
export function execFileText(file: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  let cwd: string;
  try {
    // the directory as of this call (the helper's own stays where it started)
    cwd = path.resolve(options.cwd ?? '.');
  } catch {
    return execHere(file, args, options);
  }
  const h = helper ?? (helper = startHelper());
  if (!h || h.dead || !h.child.connected) return execHere(file, args, options);
  const request: Request = {
    id: nextId++,
    file,
    args,
    cwd,
    env: { ...(options.env ?? process.env) },
    input: options.input,
    maxBuffer: options.maxBuffer ?? DEFAULT_MAX_BUFFER,
  };
  return new Promise((resolve) => {
    h.calls.set(request.id, { request, options, resolve });
    idle(h);
    try {
      h.child.send(request);
    } catch {
      h.calls.delete(request.id);
      idle(h);
      resolve(execHere(file, args, options));
    }
  });
}
