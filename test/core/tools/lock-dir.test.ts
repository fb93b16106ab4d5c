import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import { withPathLock } from '../../../src/core/tools/path-lock.ts';
import { LOCK_DIR_ENV, userLockDir } from '../../../src/core/tools/user-dir.ts';
import { NOBODY, otherUserUnavailable, stageForOtherUser } from '../../as-user.ts';

// Issue 47: every per-file lock lived in one fixed folder, <temp>/forkcache-locks, made with the
// first user's umask. Once root had used forkcache, every other user's edit_file and write_file
// answered "permission denied"; and any local user could make that folder first and plant lock
// files naming a live pid, holding every other user's edits. Now each user's locks live in a
// folder of that user's own (src/core/tools/user-dir.ts), and one another user made is gone around.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const uid = process.getuid?.() ?? 0;
const isRoot = uid === 0;
const lockNameOf = (real: string) => `${createHash('sha256').update(real).digest('hex').slice(0, 32)}.lock`;

let base: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  base = mkdtempSync(path.join(tmpdir(), 'fc-lockdir-'));
  mkdirSync(path.join(base, 'tmp'));
  // the other candidates out of the way: no runtime dir, the state directory under `base`
  env = { FORKCACHE_STATE_DIR: path.join(base, 'state') };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const tmp = () => path.join(base, 'tmp');

describe('the lock directory belongs to the user running forkcache', () => {
  it('is made per user under the temp directory, mode 0700, owned by that user', () => {
    const dir = userLockDir({ env, uid, tmp: tmp() });
    expect(dir).toBe(path.join(tmp(), `forkcache-${uid}`, 'locks'));
    for (const d of [dir, path.dirname(dir)]) {
      const info = lstatSync(d);
      expect(info.uid).toBe(uid);
      expect(info.mode & 0o777).toBe(0o700);
    }
  });

  it('uses $XDG_RUNTIME_DIR first when it is set', () => {
    const runtime = path.join(base, 'run');
    mkdirSync(runtime, { mode: 0o700 });
    expect(userLockDir({ env: { ...env, XDG_RUNTIME_DIR: runtime }, uid, tmp: tmp() })).toBe(
      path.join(runtime, 'forkcache', 'locks'),
    );
  });

  it('goes around a folder of its name that others can write (planted locks), to the state directory', () => {
    const planted = path.join(tmp(), `forkcache-${uid}`);
    mkdirSync(path.join(planted, 'locks'), { recursive: true });
    chmodSync(planted, 0o777);
    const dir = userLockDir({ env, uid, tmp: tmp() });
    expect(dir).toBe(path.join(base, 'state', 'locks'));
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
  });

  it('goes around a symbolic link planted in its place', () => {
    const elsewhere = path.join(base, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, path.join(tmp(), `forkcache-${uid}`));
    expect(userLockDir({ env, uid, tmp: tmp() })).toBe(path.join(base, 'state', 'locks'));
  });

  it('when every candidate belongs to someone else, refuses naming each and FORKCACHE_LOCK_DIR (played as uid+1)', () => {
    // the folders are ours on disk; forkcache is told it runs as someone else
    const other = uid + 1;
    expect(() => userLockDir({ env, uid: other, tmp: tmp() })).toThrow(
      new RegExp(
        `forkcache-${other}: it belongs to uid ${uid}, not to ${other};.*state: it belongs.*set FORKCACHE_LOCK_DIR`,
      ),
    );
  });

  it('refuses an explicit FORKCACHE_LOCK_DIR that others can write, naming the variable (exit class input)', () => {
    const open = path.join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const attempt = () => userLockDir({ env: { ...env, [LOCK_DIR_ENV]: open }, uid, tmp: tmp() });
    expect(attempt).toThrow(ForkcacheError);
    expect(attempt).toThrow(/FORKCACHE_LOCK_DIR=.*others can write/);
    try {
      attempt();
    } catch (err) {
      expect((err as ForkcacheError).code).toBe('LOCK_DIR_UNSAFE');
    }
  });
});

describe('a lock folder another user made first never blocks or misleads forkcache', () => {
  beforeEach((ctx) => {
    if (!isRoot) ctx.skip('giving a folder to another user (chown) needs root');
  });
  it('a folder owned by someone else, holding a lock that names a live pid: the edit goes on at once', async () => {
    const planted = path.join(tmp(), `forkcache-${uid}`, 'locks');
    mkdirSync(planted, { recursive: true });
    const file = path.join(base, 'work', 'a.txt');
    mkdirSync(path.dirname(file));
    writeFileSync(path.join(planted, lockNameOf(file)), '1'); // pid 1 lives for ever
    for (const d of [planted, path.dirname(planted)]) chownSync(d, NOBODY, NOBODY);
    const saved = {
      TMPDIR: process.env['TMPDIR'],
      FORKCACHE_STATE_DIR: process.env['FORKCACHE_STATE_DIR'],
      XDG: process.env['XDG_RUNTIME_DIR'],
    };
    process.env['TMPDIR'] = tmp();
    process.env['FORKCACHE_STATE_DIR'] = env['FORKCACHE_STATE_DIR'];
    delete process.env['XDG_RUNTIME_DIR'];
    try {
      // an abort that never comes: the lock must be had without waiting on the planted one
      const got = await withPathLock(file, undefined, async () => 'held');
      expect(got).toBe('held');
      expect(userLockDir()).toBe(path.join(base, 'state', 'locks'));
    } finally {
      for (const [k, v] of [
        ['TMPDIR', saved.TMPDIR],
        ['FORKCACHE_STATE_DIR', saved.FORKCACHE_STATE_DIR],
        ['XDG_RUNTIME_DIR', saved.XDG],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('another user edits after root has used forkcache on the machine', () => {
  it("edit_file and write_file work for nobody; root's lock folder and one root planted are gone around", async (ctx) => {
    if (otherUserUnavailable !== undefined) return ctx.skip(otherUserUnavailable);
    const staged = await stageForOtherUser(path.join(ROOT, 'test/fixtures/edit-as-user.ts'));
    if ('reason' in staged) return ctx.skip(staged.reason);
    try {
      chmodSync(base, 0o755);
      chmodSync(tmp(), 0o1777);
      // root used forkcache first: its own lock folder under the same temp directory
      await withPathLock(path.join(base, 'root-file'), undefined, async () => undefined).catch(() => undefined);
      userLockDir({ env, uid, tmp: tmp() });
      mkdirSync(path.join(tmp(), 'forkcache-locks'), { mode: 0o755 }); // the one fixed folder of every user, before
      // and root (playing the attacker) made nobody's folder first, with a lock on the file nobody edits
      const workspace = path.join(base, 'ws');
      mkdirSync(workspace);
      chownSync(workspace, NOBODY, NOBODY);
      const squatted = path.join(tmp(), `forkcache-${NOBODY}`, 'locks');
      mkdirSync(squatted, { recursive: true });
      writeFileSync(path.join(squatted, lockNameOf(path.join(workspace, 'a.txt'))), '1');
      const state = path.join(base, 'nobody-state');
      mkdirSync(state);
      chownSync(state, NOBODY, NOBODY);
      const child = staged.run([workspace], {
        env: { PATH: process.env['PATH'], TMPDIR: tmp(), FORKCACHE_STATE_DIR: state, HOME: workspace },
      });
      child.stdin.end();
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, out).toBe(0);
      expect(readFileSync(path.join(workspace, 'a.txt'), 'utf8')).toBe('two\n');
      expect(out).toMatch(/forkcache keeps its file locks in .*nobody-state\/locks: .*belongs to uid 0/);
    } finally {
      staged.cleanup();
    }
  });
});
