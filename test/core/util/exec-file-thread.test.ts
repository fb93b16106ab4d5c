import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { procStat } from './proc-stat.ts';

// An engine embedded in a worker thread (as under a test runner's threads, or an app's) starts
// its programs through a helper of its own thread too: a worker's fork() copies the whole
// process, 30-35 ms a start in a 1.5 GB one. The helper must be no child of this process, or
// it would stay a zombie once the thread is gone (a thread's children are reaped by its loop).

/**
 * A worker thread that runs `calls` shells through execFileText (the built module), reports what
 * each saw, and stays until terminated (on its own it would end once idle, its helper with it,
 * before the test looked at the helper: the flake a loaded machine showed).
 */
async function inAThread(calls: number): Promise<{ worker: Worker; seen: { pid: number; parent: number }[] }> {
  const built = process.env['FORKCACHE_BUILT_SOURCES'];
  expect(built, 'the build of test/setup/global-build.ts').toBeTruthy();
  const module = join(built!, 'src', 'core', 'util', 'exec-file.js');
  expect(existsSync(module)).toBe(true);
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     import(${JSON.stringify(pathToFileURL(module).href)}).then(async ({ execFileText }) => {
       const seen = [];
       for (let i = 0; i < ${calls}; i++) {
         const r = await execFileText('sh', ['-c', 'echo $$ $PPID']);
         const [pid, parent] = r.stdout.trim().split(' ').map(Number);
         seen.push({ pid, parent });
       }
       parentPort.postMessage(seen);
       // alive until the test ends it: a thread with nothing left to do would end by itself
       setInterval(() => {}, 1 << 30);
     });`,
    { eval: true },
  );
  const seen = await new Promise<{ pid: number; parent: number }[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { worker, seen };
}

describe('execFileText in a worker thread', () => {
  it('starts every program through one helper of the thread, no child of this process, which ends with the thread', async () => {
    const { worker, seen } = await inAThread(5);
    const helpers = new Set(seen.map((s) => s.parent));
    // one helper for the thread's calls, not a fork of this process per program
    expect(helpers.size).toBe(1);
    const helper = [...helpers][0]!;
    expect(helper).not.toBe(process.pid);
    expect(seen.every((s) => s.pid !== process.pid && s.pid !== helper)).toBe(true);
    const cmd = readFileSync(`/proc/${helper}/cmdline`, 'utf8').split('\0');
    expect(cmd[1]).toBe('-e');
    expect(cmd[2]).toContain('execFile');
    // no child of this process, in its process group (a terminal's Ctrl-C reaches it)
    expect(procStat(helper)!.parent).not.toBe(process.pid);
    expect(procStat(helper)!.group).toBe(procStat('self')!.group);

    await worker.terminate();
    // the thread is gone: its channel closed, the helper exits, and nothing of it stays here
    await vi.waitFor(
      () => {
        const now = procStat(helper);
        expect(now === undefined || now.state === 'Z').toBe(true);
      },
      { timeout: 60_000, interval: 20 },
    );
    const left = procStat(helper);
    if (left) expect(left.parent).not.toBe(process.pid);
  });
});
