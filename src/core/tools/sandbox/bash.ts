import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { Capture } from './capture.ts';
import type { ToolContext } from '../context.ts';
import { LAUNCHER_READY, LIMITS_FAILED_EXIT, launcherEnv } from './launcher.ts';
import { killTree, watchParentDeath } from './process-group.ts';
import { toolFailure } from '../result.ts';
import { spawnSpec } from './sandbox.ts';
import type { SpawnSpec } from './types.ts';
import type { BashInput } from '../schemas.ts';

interface Outcome {
  readonly code: number | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

function format(out: Outcome): string {
  const parts = [out.stdout];
  if (out.stderr !== '') parts.push(`[stderr]\n${out.stderr}`);
  const body = parts.filter((p) => p !== '').join('\n');
  return body === '' ? '(no output)' : body;
}

const quiet = (stream: Writable | null | undefined): void => void stream?.on('error', () => undefined);

/** Start the command: spawn it (held by the launcher), feed bwrap its data; the caller arms the watchdog and releases it once the launcher is up. */
function start(spec: SpawnSpec, cwd: string): ChildProcess {
  const child = spawn(spec.file, spec.args, {
    cwd,
    env: spec.env,
    stdio: ['pipe', 'pipe', 'pipe', ...spec.extra.map((e) => ('fd' in e ? e.fd : 'pipe'))],
    detached: process.platform !== 'win32',
  });
  // a child that died at once (or never started) closes its pipes: writing must not throw
  quiet(child.stdin);
  spec.extra.forEach((e, i) => {
    if (!('text' in e)) return;
    const pipe = child.stdio[3 + i] as Writable | null;
    quiet(pipe);
    pipe?.end(e.text);
  });
  return child;
}

/**
 * bash: `bash -c command` with the workspace root as cwd, a timeout, capped output, no stdin
 * and a minimal environment, in the sandbox the executor chose (sandbox.ts): bubblewrap where
 * it exists, otherwise a plain process with the user's rights (the run says so).
 *
 * The command runs in its own process group (and without bubblewrap in a pids cgroup where one
 * can be made), killed when the call ends in any way (done, timeout, abort), so nothing it
 * started in the background outlives the call. If this process dies, bubblewrap's
 * `--die-with-parent` ends the sandbox; without it a watchdog kills the group and the cgroup,
 * armed before the launcher lets the command start (launcher.ts).
 */
export async function runBash(input: BashInput, ctx: ToolContext): Promise<string> {
  const { signal } = ctx;
  signal?.throwIfAborted();
  const spec = spawnSpec(ctx.sandbox, ctx.jail, input.command, launcherEnv(ctx.bashEnv), ctx.sandboxOptions);
  const outcome = await new Promise<Outcome>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = start(spec, ctx.jail.root);
    } catch (err) {
      spec.release();
      reject(toolFailure('TOOL_COMMAND_FAILED', `could not start bash: ${(err as Error).message}`));
      return;
    }
    const stopWatchdog = spec.diesWithParent ? () => {} : watchParentDeath(child, spec.procs);
    // the group and tree, then whatever left both (`setsid` in a subshell) through the cgroup
    const killAll = (): void => {
      killTree(child);
      spec.killRest();
    };
    const stdout = new Capture(ctx.limits.maxBashOutputBytes);
    const stderr = new Capture(ctx.limits.maxBashOutputBytes);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killAll();
    }, ctx.limits.bashTimeoutMs);
    const onAbort = (): void => killAll();
    signal?.addEventListener('abort', onAbort, { once: true });
    let settled = false;
    // the launcher's first byte says it runs (in bubblewrap: the sandbox set up, tied to this
    // process); only then does it get its go, so a forkcache killed before never starts the command
    let up = false;
    const cleanup = (): void => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      stopWatchdog?.();
      // never told to go: a launcher still there sees end of file and exits without running it
      if (!up) child.stdin?.destroy();
      spec.release();
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      if (!up && chunk[0] === LAUNCHER_READY) {
        up = true;
        chunk = chunk.subarray(1);
        // not for a call already ended (timed out, aborted, its watchdog missing): it was killed
        if (!settled && !timedOut && signal?.aborted !== true) child.stdin?.end('\n'); // the launcher's go
      }
      stdout.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (err) => {
      if (settled) return;
      cleanup();
      reject(toolFailure('TOOL_COMMAND_FAILED', `could not start bash: ${err.message}`));
    });
    // what the command left running in the background ends with it (and stops holding the pipes)
    child.on('exit', () => killAll());
    child.on('close', (code) => {
      if (settled) return;
      cleanup();
      resolve({ code, timedOut, stdout: stdout.text(), stderr: stderr.text() });
    });
    if (stopWatchdog === undefined) {
      // unwatched, a crash of forkcache would orphan it: it never starts (its stdin closes)
      killAll();
      cleanup();
      reject(toolFailure('TOOL_COMMAND_FAILED', 'could not start the watchdog process; the command was not run'));
      return;
    }
  });
  signal?.throwIfAborted(); // an abort killed the command: that is cancellation, not a result
  if (outcome.timedOut) {
    throw toolFailure(
      'TOOL_COMMAND_FAILED',
      `command timed out after ${ctx.limits.bashTimeoutMs} ms and was killed\n${format(outcome)}`,
    );
  }
  if (outcome.code === LIMITS_FAILED_EXIT && outcome.stderr.includes('forkcache: could not set the sandbox limits')) {
    throw toolFailure(
      'TOOL_COMMAND_FAILED',
      `the sandbox's limits could not be set; the command did not run\n${format(outcome)}`,
    );
  }
  if (outcome.code !== 0) {
    const status = outcome.code === null ? 'was killed by a signal' : `exited with code ${outcome.code}`;
    throw toolFailure('TOOL_COMMAND_FAILED', `command ${status}\n${format(outcome)}`, { exitCode: outcome.code });
  }
  return format(outcome);
}
