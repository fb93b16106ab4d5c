import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { execFileText } from '../../../src/core/util/exec-file.ts';
import { tsxLoaderUrl } from '../../../src/core/pool/worker-file.ts';

// The programs forkcache runs by the hundred (git, rm, mkfs, mount) are started by a small
// helper process, not by a fork() of this large one (src/core/util/exec-file.ts). What a call
// returns must be what `execFile` gave; the helper must hold none of this process' secrets and
// must never keep it alive or lose a call when it dies.

/**
 * The process that starts this module's programs: the parent of a shell it ran. It must be a
 * helper: a child of this process running `node -e` with the runner's script. (This process may
 * hold more than one: the CLI that tests run in-process loads its own copy of the module.)
 */
async function helper(): Promise<number> {
  const pid = Number((await execFileText('sh', ['-c', 'echo $PPID'])).stdout.trim());
  expect(pid).not.toBe(process.pid);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), 'its parent').toBe(process.pid);
  const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  expect(cmd[1]).toBe('-e');
  expect(cmd[2]).toContain('execFile');
  return pid;
}

describe('execFileText: programs started by the helper process', () => {
  it('returns what execFile gives: output, exit codes, input, a missing program, maxBuffer', async () => {
    expect(await execFileText('sh', ['-c', 'echo out; echo err >&2; exit 3'])).toEqual({
      stdout: 'out\n',
      stderr: 'err\n',
      code: 3,
      signal: null,
      error: undefined,
    });
    expect((await execFileText('cat', [], { input: 'piped\0bytes' })).stdout).toBe('piped\0bytes');
    // no input: standard input is closed at once (cat ends instead of waiting)
    expect(await execFileText('cat', [])).toMatchObject({ code: 0, stdout: '' });
    expect((await execFileText('pwd', [], { cwd: '/usr' })).stdout).toBe('/usr\n');
    const missing = await execFileText('forkcache-no-such-program', []);
    expect(missing).toMatchObject({ code: null, error: { code: 'ENOENT' } });
    const capped = await execFileText('sh', ['-c', 'head -c 5000 /dev/zero'], { maxBuffer: 1000 });
    expect(capped.code).toBeNull();
    expect(capped.error?.code).toBe('ERR_CHILD_PROCESS_STDIO_MAXBUFFER');
    // each of them started by the helper, not by this process
    await helper();
  });

  it('gives each program exactly the environment of its call; the helper itself holds none of this process', async () => {
    const before = process.env['FORKCACHE_TEST_SECRET'];
    process.env['FORKCACHE_TEST_SECRET'] = 'sk-ant-canary';
    try {
      const own = await execFileText('sh', ['-c', 'echo "[$FORKCACHE_TEST_SECRET][$ONLY]"'], {
        env: { PATH: process.env['PATH'], ONLY: 'this' },
      });
      expect(own.stdout).toBe('[][this]\n');
      // no env: this process' environment, as execFile
      expect((await execFileText('sh', ['-c', 'echo "$FORKCACHE_TEST_SECRET"'])).stdout).toBe('sk-ant-canary\n');
      const environ = readFileSync(`/proc/${await helper()}/environ`, 'utf8');
      expect(environ).not.toContain('sk-ant-canary');
      // PATH, and what Node sets up for the helper's IPC channel
      const names = environ
        .split('\0')
        .filter(Boolean)
        .map((l) => l.slice(0, l.indexOf('=')));
      expect(names.sort()).toEqual(['NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE', 'PATH']);
    } finally {
      if (before === undefined) delete process.env['FORKCACHE_TEST_SECRET'];
      else process.env['FORKCACHE_TEST_SECRET'] = before;
    }
  });

  it('a helper killed with calls in flight: those end as killed programs, and the next call starts a new one', async () => {
    const first = await helper();
    const inFlight = execFileText('sleep', ['30']);
    process.kill(first, 'SIGKILL');
    expect(await inFlight).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(await execFileText('echo', ['again'])).toMatchObject({ code: 0, stdout: 'again\n' });
    expect(await helper()).not.toBe(first);
  });

  it('ignores the signals a terminal sends the process group, and keeps no process alive once its calls are done', async () => {
    // a process that runs one program through the helper and then has nothing left to do
    const script = fileURLToPath(new URL('../../../src/core/util/exec-file.ts', import.meta.url));
    const child = spawn(
      process.execPath,
      [
        '--import',
        tsxLoaderUrl(),
        '--input-type=module',
        '-e',
        `const { execFileText } = await import(${JSON.stringify(script)});
         const r = await execFileText('echo', ['from the helper']);
         process.stdout.write(r.stdout);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(out).toBe('from the helper\n');
    // SIGINT to the helper (as a terminal's Ctrl-C reaches the whole group): calls go on
    const before = await helper();
    process.kill(before, 'SIGINT');
    expect(await execFileText('echo', ['still'])).toMatchObject({ code: 0, stdout: 'still\n' });
    expect(await helper()).toBe(before);
  });
});
