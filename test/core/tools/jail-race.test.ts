import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executorIn, makeSandbox, roundsWhileSwapping, type Sandbox } from './helpers.ts';

// Issue 15, case 5: a process swapping a workspace directory for a symlink to an outside
// directory while forks read and write under it: 606 of 3,615 reads returned the outside file
// and 50 files were created outside. The swapper is a real process; the test counts operations
// (no time window) while it swaps.

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('sub/file.txt', 'INSIDE\n');
  await sandbox.put('sub/deep/keep.txt', 'x');
});
afterEach(() => sandbox.cleanup());

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
    const tools = executorIn(sandbox, { allow: ['read_file', 'write_file', 'edit_file', 'grep'] });
    const reads: string[] = [];
    // at least 60 rounds and 150 reads that succeeded (about 1,000 calls on an idle machine):
    // the escape this guards against hit 17% of reads
    await roundsWhileSwapping(
      sandbox.workspace,
      sandbox.outside,
      (round) =>
        Promise.all([
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
        ]),
      { enough: () => reads.length >= 150 },
    );
    expect(reads.length).toBeGreaterThanOrEqual(150);
    expect(reads.filter((r) => r.includes('OUTSIDE'))).toEqual([]);
    expect(filesUnder(sandbox.outside)).toEqual(outsideBefore);
  });
});
