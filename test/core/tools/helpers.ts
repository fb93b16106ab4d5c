import { spawn } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { createToolExecutor, type ToolExecutorOptions } from '../../../src/core/tools/executor.ts';
import type { ToolResult } from '../../../src/core/tools/result.ts';

/** A temp directory holding a workspace and, next to it, a directory the jail must keep out. */
export interface Sandbox {
  readonly base: string;
  readonly workspace: string;
  readonly outside: string;
  /** Write a file (creating parents) relative to the workspace. */
  put(relative: string, content: string | Buffer): Promise<string>;
  cleanup(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const base = await mkdtemp(path.join(tmpdir(), 'forkcache-tools-'));
  const workspace = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'TOP SECRET\n');
  return {
    base,
    workspace,
    outside,
    async put(relative, content) {
      const file = path.join(workspace, relative);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

export function executorIn(sandbox: Sandbox, options: Omit<ToolExecutorOptions, 'workspace'> = {}) {
  return createToolExecutor({ workspace: sandbox.workspace, ...options });
}

/** The content of a successful result (fails the test with the error text otherwise). */
export function okContent(result: ToolResult): string {
  expect(result, result.content).toMatchObject({ isError: false });
  return result.content;
}

/** The error result's code and content (fails the test on success). */
export function errorOf(result: ToolResult): { code: string; content: string } {
  expect(result.isError, `expected an error, got: ${result.content}`).toBe(true);
  return { code: result.isError ? result.code : '', content: result.content };
}

const SWAPPER = fileURLToPath(new URL('../../fixtures/swap-dir.mjs', import.meta.url));

/**
 * Run rounds of tool calls while a real process swaps `<workspace>/sub` for a symlink to
 * `target` and back (issue 15, case 5). How many calls succeed while it swaps depends on how the
 * machine schedules the two processes, so the rounds go on until `enough()` says the tools were
 * exercised (at least `minRounds`, at most `maxRounds`: counts of operations, never a time
 * window). Puts the workspace back together afterwards. Returns the rounds run.
 */
export async function roundsWhileSwapping(
  workspace: string,
  target: string,
  round: (i: number) => Promise<unknown>,
  { enough, minRounds = 60, maxRounds = 3000 }: { enough: () => boolean; minRounds?: number; maxRounds?: number },
): Promise<number> {
  const swapper = spawn(process.execPath, [SWAPPER, workspace, target], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => swapper.stdout.once('data', () => resolve()));
  let rounds = 0;
  try {
    while (rounds < maxRounds && (rounds < minRounds || !enough())) await round(rounds++);
  } finally {
    swapper.kill('SIGKILL');
    await new Promise((resolve) => swapper.once('close', resolve));
  }
  // the swapper may have been stopped mid-swap
  const sub = path.join(workspace, 'sub');
  const aside = path.join(workspace, 'sub.aside');
  if (existsSync(aside)) {
    rmSync(sub, { force: true, recursive: true });
    renameSync(aside, sub);
  }
  return rounds;
}
