import { spawn } from 'node:child_process';
import type { ToolContext } from './context.ts';
import { toolFailure } from './result.ts';
import type { BashInput } from './schemas.ts';

/** Output of one stream, kept up to a byte cap (the rest is counted, not stored). */
class Capture {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #dropped = 0;
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  push(chunk: Buffer): void {
    const room = this.#max - this.#kept;
    if (room > 0) this.#chunks.push(chunk.subarray(0, room));
    this.#kept += Math.min(room, chunk.length);
    this.#dropped += Math.max(0, chunk.length - Math.max(room, 0));
  }

  text(): string {
    const body = Buffer.concat(this.#chunks).toString('utf8');
    return this.#dropped > 0 ? `${body}\n[truncated: ${this.#dropped} more bytes]` : body;
  }
}

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
 * and a minimal environment. This is not a sandbox: the command runs with the process's own
 * rights and can `cd` anywhere, which is why bash is off unless a fork is allowed it.
 *
 * spawn rather than execFile: the command runs in its own process group, so a timeout or an
 * abort kills its children too; with execFile an orphaned `sleep` keeps the pipes open and
 * the call waits for it.
 */
export async function runBash(input: BashInput, ctx: ToolContext): Promise<string> {
  const { signal } = ctx;
  signal?.throwIfAborted();
  const outcome = await new Promise<Outcome>((resolve, reject) => {
    const child = spawn('bash', ['-c', input.command], {
      cwd: ctx.jail.root,
      env: { ...ctx.bashEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    const stdout = new Capture(ctx.limits.maxBashOutputBytes);
    const stderr = new Capture(ctx.limits.maxBashOutputBytes);
    let timedOut = false;
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(process.platform === 'win32' ? child.pid : -child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, ctx.limits.bashTimeoutMs);
    const onAbort = (): void => killGroup();
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (err) => {
      cleanup();
      reject(toolFailure('TOOL_COMMAND_FAILED', `could not start bash: ${err.message}`));
    });
    child.on('close', (code) => {
      cleanup();
      resolve({ code, timedOut, stdout: stdout.text(), stderr: stderr.text() });
    });
  });
  signal?.throwIfAborted(); // an abort killed the command: that is cancellation, not a result
  if (outcome.timedOut) {
    throw toolFailure('TOOL_COMMAND_FAILED', `command timed out after ${ctx.limits.bashTimeoutMs} ms and was killed\n${format(outcome)}`);
  }
  if (outcome.code !== 0) {
    const status = outcome.code === null ? 'was killed by a signal' : `exited with code ${outcome.code}`;
    throw toolFailure('TOOL_COMMAND_FAILED', `command ${status}\n${format(outcome)}`, { exitCode: outcome.code });
  }
  return format(outcome);
}
