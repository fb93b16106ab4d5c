import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// examples/embed/embed.ts is the README's copy-paste program: it must run as written. It is run
// as a user's project would run it (tsx), with `forkcache` resolved to this checkout's sources
// by the example's own tsconfig (its `paths`), against the local emulator it starts itself.
const ROOT = resolve(import.meta.dirname, '../..');
const tsxCli = join(createRequire(import.meta.url).resolve('tsx'), '../cli.mjs');

function runExample(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [tsxCli, '--tsconfig', 'examples/embed/tsconfig.json', 'examples/embed/embed.ts'],
      { cwd: ROOT, env: { ...process.env, ANTHROPIC_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
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
