import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lockRunDir } from '../../../src/core/run-dir/writer-lock.ts';

// Issue 24, route 6: one writer per run directory. The holder is named by pid and process
// start time; a holder that is gone (kill -9) or whose pid now belongs to another process
// leaves a lock that is taken over, by exactly one of the processes racing for it.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const fresh = () => mkdtempSync(join(tmpdir(), 'fc-lock-'));
const lockFiles = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.startsWith('writer.lock.'))
    .sort();
const holder = (pid: number, start: string | null, host = hostname()) =>
  JSON.stringify({ pid, start, host, command: 'forkcache resume runs', since: '2026-12-01T10:00:00.000Z', nonce: 'n' });

describe('the writer lock of a run directory', () => {
  it('refuses a second writer at once, naming the holder; free again once released', () => {
    const dir = fresh();
    const lock = lockRunDir(dir);
    let error: { code?: string; message?: string } = {};
    try {
      lockRunDir(dir);
    } catch (err) {
      error = err as typeof error;
    }
    expect(error.code).toBe('RUN_DIR_LOCKED');
    expect(error.message).toMatch(
      new RegExp(`is being written by another forkcache: pid ${process.pid} \\(.+\\), since \\d{4}-\\d\\d-\\d\\dT`),
    );
    lock.release();
    expect(lockFiles(dir)).toEqual([]);
    lockRunDir(dir).release();
  });

  it('takes over the lock of a process that is gone (kill -9 leaves it behind)', () => {
    const dir = fresh();
    const gone = spawnSync(process.execPath, ['-e', 'process.kill(process.pid, "SIGKILL")']).pid as number;
    writeFileSync(join(dir, 'writer.lock.1'), holder(gone, '12345'));
    const lock = lockRunDir(dir);
    expect(lockFiles(dir)).toEqual(['writer.lock.2']);
    expect(JSON.parse(readFileSync(join(dir, 'writer.lock.2'), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('takes over a lock whose pid now belongs to another process (its start time differs)', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'writer.lock.1'), holder(process.ppid, '1')); // alive, but not the holder that wrote it
    lockRunDir(dir).release();
  });

  it("never takes another machine's lock (it cannot know): it names the file to remove", () => {
    const dir = fresh();
    writeFileSync(join(dir, 'writer.lock.7'), holder(1, '1', 'build-host-2'));
    expect(() => lockRunDir(dir)).toThrow(/pid 1 on build-host-2 .*if it is gone, remove \S+writer\.lock\.7/);
  });

  it('lets exactly one of eight processes racing for a stale lock take it', async () => {
    const dir = fresh();
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
    writeFileSync(join(dir, 'writer.lock.1'), holder(gone, '12345'));
    const contenders = Array.from({ length: 8 }, () =>
      spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/fixtures/lock-contender.ts'), dir], {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    const lines = contenders.map((c) => {
      const seen: string[] = [];
      c.stdout.on('data', (d: Buffer) => seen.push(...d.toString().split('\n').filter(Boolean)));
      return seen;
    });
    const settled = async (test: () => boolean) => {
      while (!test()) await new Promise((r) => setTimeout(r, 10));
    };
    await settled(() => lines.every((l) => l.includes('ready')));
    for (const c of contenders) c.stdin.write('go\n'); // as close together as one loop can
    await settled(() => lines.every((l) => l.length >= 2));
    const outcomes = lines.map((l) => l[1]).sort();
    expect(outcomes).toEqual(['held', ...Array(7).fill('locked RUN_DIR_LOCKED')]);
    for (const c of contenders) c.stdin.end();
    await Promise.all(contenders.map((c) => new Promise((r) => (c.exitCode !== null ? r(0) : c.on('exit', r)))));
    expect(lockFiles(dir)).toEqual([]);
  });
});
