import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RunResult, runNode } from '../cli/run-cli.ts';

// examples/embed/embed.ts is the README's copy-paste program: it must run as written. It is run
// as a user's project would run it (tsx), with `forkcache` resolved to this checkout's sources
// by the example's own tsconfig (its `paths`), against the local emulator it starts itself.
const ROOT = resolve(import.meta.dirname, '../..');
const tsxCli = join(createRequire(import.meta.url).resolve('tsx'), '../cli.mjs');

function runExample(): Promise<RunResult> {
  return runNode([tsxCli, '--tsconfig', 'examples/embed/tsconfig.json', 'examples/embed/embed.ts'], {
    cwd: ROOT,
    env: { ANTHROPIC_API_KEY: '' },
  });
}

describe('examples/embed', () => {
  it('runs on the emulator: six forks rename the files, then the agent tool forks from a parent', async () => {
    const { code, stdout, stderr } = await runExample();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.match(/^\S+-f0\d completed: renamed/gm)).toHaveLength(6);
    expect(stdout).toMatch(/^cache efficiency 1\.000, cost \$\d/m);
    expect(stdout).toMatch(/^fetchData left: none$/m);
    expect(stdout).toMatch(/^parent: Started 6 fork\(s\) to rename loadData to getData/m);
    expect(stdout).toMatch(/^tree: \d+ requests \(parent and 6 forks\), cost \$\d/m);
  });
});
