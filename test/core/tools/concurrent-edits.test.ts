import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tsxLoaderUrl } from '../../../src/core/pool/worker-file.ts';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

// Issue 15 case 1: forks sharing a workspace edit one file at once. Before atomic writes and
// per-file locks, a read during an in-place rewrite returned '' and concurrent read-modify-
// writes overwrote each other's renames.

let sandbox: Sandbox;
const IDS = Array.from({ length: 24 }, (_, i) => `ident${String(i).padStart(2, '0')}`);

/** ~200 KB of code mentioning every identifier many times. */
function bigSource(): string {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < 200_000; i++) {
    const line = `export const v${i} = ${IDS[i % IDS.length]}(${i}) + ${IDS[(i * 7) % IDS.length]};`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

beforeEach(async () => {
  sandbox = await makeSandbox();
  await sandbox.put('big.ts', bigSource());
});
afterEach(() => sandbox.cleanup());

describe('concurrent edits of one file (issue 15, case 1)', () => {
  it('applies all 24 renames made at once by 24 executors, and no read sees a partial file', async () => {
    const forks = IDS.map(() => executorIn(sandbox, { limits: { maxReadBytes: 1024 * 1024 } }));
    const size = (await readFile(path.join(sandbox.workspace, 'big.ts'))).length;
    const reads: number[] = [];
    await Promise.all(
      IDS.map(async (id, i) => {
        const tools = forks[i]!;
        reads.push(okContent(await tools.execute('read_file', { path: 'big.ts' })).length);
        okContent(
          await tools.execute('edit_file', {
            path: 'big.ts',
            old_string: id,
            new_string: `${id}_renamed`,
            replace_all: true,
          }),
        );
        reads.push(okContent(await tools.execute('read_file', { path: 'big.ts' })).length);
      }),
    );
    const text = await readFile(path.join(sandbox.workspace, 'big.ts'), 'utf8');
    for (const id of IDS) expect(text).not.toMatch(new RegExp(`\\b${id}\\b`));
    expect(Math.min(...reads)).toBeGreaterThanOrEqual(size - 1);
  });

  it('applies every rename made by real worker threads at once (a file lock, not an in-process one)', async () => {
    // the engine's own pool: two real threads, 12 forks each, all editing at once
    const pool = new Piscina({
      filename: fileURLToPath(new URL('../../fixtures/workers/rename-worker.ts', import.meta.url)),
      execArgv: ['--import', tsxLoaderUrl()], // a .ts fixture: the loader, never the suite's build
      minThreads: 2,
      maxThreads: 2,
    });
    const results = await Promise.all(
      [IDS.slice(0, 12), IDS.slice(12)].map(
        (ids) => pool.run({ workspace: sandbox.workspace, ids }) as Promise<string[]>,
      ),
    ).finally(() => pool.destroy());
    expect(results.flat()).toEqual(IDS.map(() => 'ok'));
    const text = await readFile(path.join(sandbox.workspace, 'big.ts'), 'utf8');
    for (const id of IDS) expect(text).toContain(`${id}_renamed(`);
  });

  it('reports an edit whose text a sibling removed as a conflict to retry after re-reading', async () => {
    const mine = executorIn(sandbox);
    const sibling = executorIn(sandbox);
    okContent(await mine.execute('read_file', { path: 'big.ts', limit: 1 }));
    okContent(
      await sibling.execute('edit_file', {
        path: 'big.ts',
        old_string: 'ident00',
        new_string: 'gone',
        replace_all: true,
      }),
    );
    const conflict = errorOf(
      await mine.execute('edit_file', { path: 'big.ts', old_string: 'ident00', new_string: 'x', replace_all: true }),
    );
    expect(conflict.code).toBe('TOOL_EDIT_CONFLICT');
    expect(conflict.content).toMatch(/changed by another fork or process since you last read it.*read the file again/);
    // a write of the stale view would undo the sibling's rename: refused the same way
    okContent(await mine.execute('read_file', { path: 'big.ts', limit: 1 }));
    okContent(
      await sibling.execute('edit_file', {
        path: 'big.ts',
        old_string: 'ident01',
        new_string: 'gone1',
        replace_all: true,
      }),
    );
    expect(errorOf(await mine.execute('write_file', { path: 'big.ts', content: 'stale' })).code).toBe(
      'TOOL_EDIT_CONFLICT',
    );
    // a fork that never read the file gets the plain not-found
    expect(
      errorOf(
        await executorIn(sandbox).execute('edit_file', { path: 'big.ts', old_string: 'ident00', new_string: 'x' }),
      ).code,
    ).toBe('TOOL_EDIT_FAILED');
  });
});
