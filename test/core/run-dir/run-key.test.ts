import { spawn } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadRunKey, protectedDirs } from '../../../src/core/run-dir/run-key.ts';
import { stateDir, STATE_DIR_ENV } from '../../../src/core/util/state-dir.ts';

// The key that signs run directories lives outside every workspace and run directory, created
// 0600 on first use; processes creating it at once end up with one key.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const fresh = () => mkdtempSync(join(tmpdir(), 'fc-state-'));

describe('the run key', () => {
  it('lives in FORKCACHE_STATE_DIR, else XDG_STATE_HOME/forkcache, else ~/.local/state/forkcache', () => {
    expect(stateDir({ [STATE_DIR_ENV]: '/srv/ci-state', XDG_STATE_HOME: '/x' })).toBe('/srv/ci-state');
    expect(stateDir({ XDG_STATE_HOME: '/home/u/.state' })).toBe('/home/u/.state/forkcache');
    expect(stateDir({ HOME: '/home/u' })).toMatch(/\/\.local\/state\/forkcache$/);
    expect(protectedDirs('/w/.forkcache/runs', { [STATE_DIR_ENV]: '/s' })).toEqual(['/w/.forkcache/runs', '/s']);
  });

  it('is created 0600 in a 0700 directory on first use, and read back the same', () => {
    const dir = join(fresh(), 'nested');
    const env = { [STATE_DIR_ENV]: dir };
    const key = loadRunKey(env);
    expect(statSync(join(dir, 'run-key')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(key.id).toMatch(/^[0-9a-f]{8}$/);
    expect(key.bytes).toHaveLength(32);
  });

  it('refuses a file that is not a key, naming it', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'run-key'), 'not a key\n');
    expect(() => loadRunKey({ [STATE_DIR_ENV]: dir })).toThrow(
      expect.objectContaining({ code: 'RUN_KEY_UNAVAILABLE', message: expect.stringContaining(join(dir, 'run-key')) }),
    );
  });

  it('is one key when several processes create it at once', async () => {
    const dir = fresh();
    const script = `import { loadRunKey } from './src/core/run-dir/run-key.ts'; process.stdout.write(loadRunKey().id);`;
    const ids = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
              cwd: ROOT,
              env: { ...process.env, [STATE_DIR_ENV]: dir },
            });
            let out = '';
            child.stdout.on('data', (d: Buffer) => (out += d));
            child.on('close', () => resolve(out));
          }),
      ),
    );
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}$/);
  });
});
