import { spawn } from 'node:child_process';
import { Capture } from './capture.ts';
import type { ToolContext } from './context.ts';
import { killTree, watchParentDeath } from './process-group.ts';
import { toolFailure } from './result.ts';
import { spawnSpec } from './sandbox.ts';
import type { BashInput } from './schemas.ts';

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

/**
 * bash: `bash -c command` with the workspace root as cwd, a timeout, capped output, no stdin
 * and a minimal environment, in the sandbox the executor chose (sandbox.ts): bubblewrap where
 * it exists, otherwise a plain process with the user's rights (the run says so).
 *
 * The command runs in its own process group, killed when the call ends in any way (done,
 * timeout, abort), so nothing it started in the background outlives the call; a watchdog
 * kills it if this process dies (bubblewrap's `--die-with-parent` does that in the sandbox).
 */
export async function runBash(input: BashInput, ctx: ToolContext): Promise<string> {
  const { signal } = ctx;
  signal?.throwIfAborted();
  const spec = spawnSpec(ctx.sandbox, ctx.jail.root, input.command, ctx.bashEnv);
  const outcome = await new Promise<Outcome>((resolve, reject) => {
    const child = spawn(spec.file, spec.args, {
      cwd: ctx.jail.root,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    const stopWatchdog = ctx.sandbox === 'bwrap' ? () => {} : watchParentDeath(child);
    const stdout = new Capture(ctx.limits.maxBashOutputBytes);
    const stderr = new Capture(ctx.limits.maxBashOutputBytes);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killTree(child);
    }, ctx.limits.bashTimeoutMs);
    const onAbort = (): void => killTree(child);
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      stopWatchdog();
    };
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (err) => {
      cleanup();
      reject(toolFailure('TOOL_COMMAND_FAILED', `could not start bash: ${err.message}`));
    });
    // what the command left running in the background ends with it (and stops holding the pipes)
    child.on('exit', () => killTree(child));
    child.on('close', (code) => {
      cleanup();
      resolve({ code, timedOut, stdout: stdout.text(), stderr: stderr.text() });
    });
  });
  signal?.throwIfAborted(); // an abort killed the command: that is cancellation, not a result
  if (outcome.timedOut) {
    throw toolFailure(
      'TOOL_COMMAND_FAILED',
      `command timed out after ${ctx.limits.bashTimeoutMs} ms and was killed\n${format(outcome)}`,
    );
  }
  if (outcome.code !== 0) {
    const status = outcome.code === null ? 'was killed by a signal' : `exited with code ${outcome.code}`;
    throw toolFailure('TOOL_COMMAND_FAILED', `command ${status}\n${format(outcome)}`, { exitCode: outcome.code });
  }
  return format(outcome);
}
