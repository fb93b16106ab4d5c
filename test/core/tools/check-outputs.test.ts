import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckOutputs } from '../../../src/core/tools/checks/outputs.ts';
import { ProtectedPaths } from '../../../src/core/tools/jail/protected-paths.ts';

// What the plan's check created is left out of the fork's commit, unless the fork changed it after.

function workspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'fc-outputs-')));
  writeFileSync(join(dir, 'a.py'), 'x = 1\n');
  mkdirSync(join(dir, '.git'));
  return dir;
}

const write = (dir: string, path: string, text = 'out'): void => {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
};

describe('CheckOutputs', () => {
  it('lists what a check created (a new directory as one entry), not what it changed or what was there', async () => {
    const dir = workspace();
    const outputs = new CheckOutputs(dir, new ProtectedPaths());
    const { result, outputs: made } = await outputs.around(() => {
      write(dir, '__pycache__/a.cpython-311.pyc');
      write(dir, '__pycache__/b.cpython-311.pyc');
      write(dir, 'build.log');
      write(dir, 'a.py', 'x = 1  # formatted\n'); // there before: may be the fork's own file
      write(dir, '.git/index'); // protected: never listed
      return Promise.resolve(7);
    });
    expect(result).toBe(7);
    expect(made).toEqual(['__pycache__/', 'build.log']);
  });

  it("gives back to the fork what it changed between two checks, bash's changes included", async () => {
    const dir = workspace();
    const outputs = new CheckOutputs(dir, new ProtectedPaths());
    await outputs.around(() => {
      write(dir, 'target/debug/app');
      write(dir, 'gen.txt');
      write(dir, 'cache.bin');
      return Promise.resolve();
    });
    // the fork, between the checks: edits a generated file, adds one under target/, removes another
    write(dir, 'gen.txt', 'edited by the fork');
    write(dir, 'target/notes.md', 'the fork wrote this');
    rmSync(join(dir, 'cache.bin'));
    const { outputs: made } = await outputs.around(() => {
      write(dir, 'dist/out.js');
      return Promise.resolve();
    });
    expect(made).toEqual(['dist/']);
  });
});
