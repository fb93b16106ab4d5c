import { spawn } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executorIn, makeSandbox, type Sandbox } from './helpers.ts';

// Issue 15, case 5: a process swapping a workspace directory for a symlink to an outside
// directory while forks read and write under it: 606 of 3,615 reads returned the outside file
// and 50 files were created outside. The swapper is a real process; the test runs a fixed
// number of operations (no time window) while it swaps.

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('sub/file.txt', 'INSIDE\n');
  await sandbox.put('sub/deep/keep.txt', 'x');
});
afterEach(() => sandbox.cleanup());

const SWAPPER = fileURLToPath(new URL('../../fixtures/swap-dir.mjs', import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

describe('the jail under a directory swapped for a symlink (issue 15, case 5)', () => {
  it('never reads, edits or creates anything outside the workspace', async () => {
    const { writeFile: put } = await import('node:fs/promises');
    await put(path.join(sandbox.outside, 'file.txt'), 'OUTSIDE\n');
    const outsideBefore = filesUnder(sandbox.outside);
    const swapper = spawn(process.execPath, [SWAPPER, sandbox.workspace, sandbox.outside], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => swapper.stdout.once('data', () => resolve()));
    const tools = executorIn(sandbox, { allow: ['read_file', 'write_file', 'edit_file', 'grep'] });
    const reads: string[] = [];
    try {
      // 60 rounds, about 1,000 reads: the escape this guards against hit 17% of them
      for (let round = 0; round < 60; round++) {
        const batch = [
          ...Array.from({ length: 16 }, () =>
            tools
              .execute('read_file', { path: 'sub/file.txt' })
              .then((r) => void (!r.isError && reads.push(r.content))),
          ),
          tools
            .execute('grep', { pattern: 'SIDE', path: 'sub' })
            .then((r) => void (!r.isError && reads.push(r.content))),
          tools.execute('write_file', { path: `sub/new-${round}.txt`, content: 'w' }),
          tools.execute('write_file', { path: `sub/made-${round}/f.txt`, content: 'w' }),
          tools.execute('edit_file', { path: 'sub/file.txt', old_string: 'NOPE', new_string: 'x' }),
        ];
        await Promise.all(batch);
      }
    } finally {
      swapper.kill('SIGKILL');
      await new Promise((resolve) => swapper.once('close', resolve));
    }
    // put the workspace back together if the swapper was stopped mid-swap
    const sub = path.join(sandbox.workspace, 'sub');
    const aside = path.join(sandbox.workspace, 'sub.aside');
    if (existsSync(aside)) {
      rmSync(sub, { force: true, recursive: true });
      renameSync(aside, sub);
    }
    expect(reads.length).toBeGreaterThan(100);
    expect(reads.filter((r) => r.includes('OUTSIDE'))).toEqual([]);
    expect(filesUnder(sandbox.outside)).toEqual(outsideBefore);
  });
});
