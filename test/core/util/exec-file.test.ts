import { execFile, execFileSync, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { execFileText, pathOnlyEnv, probeProgram, whyFailed } from '../../../src/core/util/exec-file.ts';
import { tsxLoaderUrl } from '../../../src/core/pool/worker-file.ts';
import { procStat } from './proc-stat.ts';

// The programs forkcache runs by the hundred (git, rm, mkfs, mount) are started by a small
// helper process, not by a fork() of this large one (src/core/util/exec-file.ts). What a call
// returns must be what `execFile` gave; the helper must hold none of this process' secrets and
// must never keep it alive or lose a call when it dies.

/**
 * The process that starts this module's programs: the parent of a shell it ran. It must be a
 * helper running `node -e` with the runner's script, in this process' group, and no child of
 * this process. (This process may hold more than one: the CLI that tests run in-process loads
 * its own copy of the module.)
 */
async function helper(): Promise<number> {
  const pid = Number((await execFileText('sh', ['-c', 'echo $PPID'])).stdout.trim());
  expect(pid).not.toBe(process.pid);
  expect(procStat(pid)!.parent, 'its parent').not.toBe(process.pid);
  expect(procStat(pid)!.group, 'its process group').toBe(procStat('self')!.group);
  const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  expect(cmd[1]).toBe('-e');
  expect(cmd[2]).toContain('execFile');
  return pid;
}

/** A node process (this module through tsx) running `body`, with `env` over this environment; its output once it and everything holding its stderr ended. */
async function inAProcess(body: string, env: Record<string, string> = {}): Promise<{ code: unknown; out: string }> {
  const script = fileURLToPath(new URL('../../../src/core/util/exec-file.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    [
      '--import',
      tsxLoaderUrl(),
      '--input-type=module',
      '-e',
      `const { execFileText } = await import(${JSON.stringify(script)});\n${body}`,
    ],
    // stderr piped: the helper inherits it, so 'close' comes only once the helper has exited too
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise((resolve) => child.on('close', resolve));
  return { code, out };
}

describe('execFileText: programs started by the helper process', () => {
  it('returns what execFile gives: output, exit codes, input, a missing program or directory, maxBuffer', async () => {
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
    // no cwd: this process' directory as of the call
    expect((await execFileText('pwd', [])).stdout).toBe(`${process.cwd()}\n`);
    // a program or directory that cannot be reached: the error execFile gives here (ENOENT, or
    // EACCES where a directory on PATH is closed to this user)
    for (const [file, cwd] of [
      ['forkcache-no-such-program', undefined],
      ['pwd', '/forkcache-no-such-dir'],
    ] as const) {
      const here = await new Promise<string | undefined>((resolve) =>
        execFile(file, [], { cwd }, (err) => resolve(err ? String(err.code) : undefined)),
      );
      expect(here).toMatch(/^E[A-Z]+$/);
      expect(await execFileText(file, [], { cwd }), `${file} in ${cwd}`).toMatchObject({
        code: null,
        error: { code: here },
      });
    }
    const capped = await execFileText('sh', ['-c', 'head -c 5000 /dev/zero'], { maxBuffer: 1000 });
    expect(capped.code).toBeNull();
    expect(capped.error?.code).toBe('ERR_CHILD_PROCESS_STDIO_MAXBUFFER');
    // 24 at once, outputs of up to 1.2 MB (many IPC reads each), each answer to its own call
    const sizes = Array.from({ length: 24 }, (_, i) => (i % 4 === 0 ? 1_200_000 - i : 100 + i * 7919));
    const outs = await Promise.all(
      sizes.map((n, i) => execFileText('sh', ['-c', `head -c ${n} /dev/zero | tr '\\0' '${'abcdefgh'[i % 8]}'`])),
    );
    outs.forEach((r, i) => expect(r.stdout, `call ${i}`).toBe('abcdefgh'[i % 8]!.repeat(sizes[i]!)));
    // each of them started by the helper, not by this process
    await helper();
  });

  it('gives each program exactly the environment of its call; the helper itself holds none of its process', async () => {
    const own = await execFileText('sh', ['-c', 'echo "[${HOME-unset}][$ONLY]"'], {
      env: { PATH: process.env['PATH'], ONLY: 'this', HOME: undefined },
    });
    expect(own.stdout).toBe('[unset][this]\n');
    // no env: this process' environment, as execFile
    expect((await execFileText('sh', ['-c', 'echo "$HOME"'])).stdout).toBe(`${process.env['HOME']}\n`);
    // a process holding a key starts its helper: the key reaches neither the helper nor a program given its own env
    const { code, out } = await inAProcess(
      `const ppid = (await execFileText('sh', ['-c', 'echo $PPID; echo "[$FORKCACHE_TEST_SECRET]"'], { env: { PATH: process.env.PATH } })).stdout;
       const [pid, seen] = ppid.trim().split('\\n');
       const { readFileSync } = await import('node:fs');
       process.stdout.write(JSON.stringify({ seen, parent: Number(pid) !== process.pid, environ: readFileSync('/proc/' + pid + '/environ', 'utf8') }));`,
      { FORKCACHE_TEST_SECRET: 'sk-ant-canary' },
    );
    expect(code).toBe(0);
    const report = JSON.parse(out) as { seen: string; parent: boolean; environ: string };
    expect(report.seen).toBe('[]');
    expect(report.parent).toBe(true);
    expect(report.environ).not.toContain('sk-ant-canary');
    // PATH, and what Node sets up for the helper's IPC channel
    const names = report.environ
      .split('\0')
      .filter(Boolean)
      .map((l) => l.slice(0, l.indexOf('=')));
    // (SHLVL and _ are the shell's own, where /bin/sh is bash: it exports them to a background job)
    expect(names.filter((n) => !['SHLVL', '_'].includes(n)).sort()).toEqual([
      'NODE_CHANNEL_FD',
      'NODE_CHANNEL_SERIALIZATION_MODE',
      'PATH',
    ]);
  });

  it('pathOnlyEnv hands a program PATH alone; whyFailed says in one line why a call failed', async () => {
    const env = await execFileText('sh', ['-c', 'env'], { env: pathOnlyEnv() });
    // sh adds PWD, SHLVL and _ of its own; nothing else of this process reaches it
    const names = env.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.slice(0, l.indexOf('=')))
      .filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n));
    expect(names).toEqual(['PATH']);
    // the last three lines of stderr, joined
    const loud = await execFileText('sh', ['-c', 'for l in one two three four; do echo $l >&2; done; exit 3']);
    expect(whyFailed(loud)).toBe('two / three / four');
    // no stderr: the exit code, the signal, or why the program could not run
    expect(whyFailed(await execFileText('sh', ['-c', 'exit 7']))).toBe('exit code 7');
    expect(whyFailed(await execFileText('sh', ['-c', 'kill -TERM $$']))).toBe('killed by SIGTERM');
    const missing = await execFileText('forkcache-no-such-program', []);
    expect(whyFailed(missing)).toBe(missing.error?.message);
    expect(whyFailed(missing)).toContain('forkcache-no-such-program');
  });

  it('a helper killed with a call in flight: its program is killed too, the call ends killed, the next call starts a new helper', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-exec-'));
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const first = await helper();
    // the program holds the fifo's write end for as long as it lives
    const inFlight = execFileText('sh', ['-c', `exec sleep 3600 > '${fifo}'`]);
    const reader = createReadStream(fifo);
    await new Promise<void>((resolve) => reader.once('open', () => resolve()));
    await execFileText('true', []); // the helper's word that the program started came before this answer
    const ended = new Promise<void>((resolve) => reader.once('close', () => resolve()));
    reader.resume();
    process.kill(first, 'SIGKILL');
    expect(await inFlight).toMatchObject({ code: null, signal: 'SIGKILL' });
    await ended; // the program's end closed the fifo (it would hold it an hour)
    expect(await execFileText('echo', ['again'])).toMatchObject({ code: 0, stdout: 'again\n' });
    expect(await helper()).not.toBe(first);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a helper that dies before its first messages are read: a program it started is never run again here', async () => {
    // This process does not yield while the helper starts call A's program and is killed: the
    // helper's `ready` and A's pid wait unread in the channel, and call B's send fails (EPIPE),
    // which Node reports before those messages are read. A must not be taken for never started.
    const { code, out } = await inAProcess(
      `const { existsSync, mkdtempSync, readFileSync } = await import('node:fs');
       const log = mkdtempSync('/tmp/fc-exec-race-') + '/log';
       // a hang guard, not a time window: this process cannot run its timers while it spins
       const spin = (ok) => { const end = Date.now() + 120_000; while (!ok()) if (Date.now() > end) throw new Error('hang guard'); };
       const a = execFileText('sh', ['-c', 'echo "$PPID" >> ' + log]);
       spin(() => existsSync(log) && readFileSync(log, 'utf8').endsWith('\\n'));
       const helper = Number(readFileSync(log, 'utf8'));
       process.kill(helper, 'SIGKILL');
       const state = () => { try { return readFileSync('/proc/' + helper + '/stat', 'utf8').split(') ')[1][0]; } catch { return 'gone'; } };
       spin(() => state() === 'Z' || state() === 'gone');
       const b = execFileText('sh', ['-c', 'echo b >> ' + log]);
       const [ra, rb] = await Promise.all([a, b]);
       const c = await execFileText('echo', ['after']);
       process.stdout.write(JSON.stringify({ log: readFileSync(log, 'utf8'), helper, ra, rb, c }));`,
    );
    expect(code, out).toBe(0);
    const r = JSON.parse(out) as Record<string, { signal?: string; stdout?: string } | string | number>;
    // A ran once, started by the helper (its answer, or killed if the helper died first: it
    // never says otherwise); B never reached a program; the next call works
    expect(r['log']).toBe(`${r['helper']}\n`);
    expect([
      { code: 0, signal: null },
      { code: null, signal: 'SIGKILL' },
    ]).toContainEqual({
      code: (r['ra'] as { code: unknown }).code,
      signal: (r['ra'] as { signal: unknown }).signal,
    });
    expect(r['rb']).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(r['c']).toMatchObject({ code: 0, stdout: 'after\n' });
  });

  it('ignores the signals a terminal sends the process group; exits with its process, keeping it alive no longer than its calls', async () => {
    // a process that runs one program through the helper and then has nothing left to do: it
    // ends, and so does its helper (which holds its stderr until then)
    const { code, out } = await inAProcess(
      `const r = await execFileText('echo', ['from the helper']); process.stdout.write(r.stdout);`,
    );
    expect(code).toBe(0);
    expect(out).toBe('from the helper\n');
    // SIGINT to the helper (as a terminal's Ctrl-C reaches the whole group): calls go on
    const before = await helper();
    process.kill(before, 'SIGINT');
    expect(await execFileText('echo', ['still'])).toMatchObject({ code: 0, stdout: 'still\n' });
    expect(await helper()).toBe(before);
    // ...and a program it starts gets Ctrl-C as usual (a shell started with SIGINT ignored could
    // not be stopped by it: `sh` starts its background jobs so)
    for (const signal of ['INT', 'QUIT']) {
      const r = await execFileText('sh', ['-c', `kill -${signal} $$; echo alive`]);
      expect(r, signal).toMatchObject({ stdout: '', signal: `SIG${signal}` });
    }
  });
});

describe('probeProgram: a probe run once, and why it failed in one line', () => {
  it('says nothing when the program exits 0, and its first line of stderr when not', () => {
    expect(probeProgram('sh', ['-c', 'exit 0'])).toBeUndefined();
    expect(probeProgram('sh', ['-c', 'echo; echo "  first  " >&2; echo second >&2; exit 3'])).toBe('first');
  });

  it('says why a program could not run, what signal ended it, or its exit code', () => {
    expect(probeProgram('/nonexistent/forkcache-probe', [])).toMatch(/ENOENT/);
    expect(probeProgram('sh', ['-c', 'kill -TERM $$'])).toBe('killed by SIGTERM');
    expect(probeProgram('sh', ['-c', 'exit 4'])).toBe('exit code 4');
  });

  it("sees PATH alone by default, never this process' key", () => {
    process.env['FORKCACHE_PROBE_SECRET'] = 'sk-ant-probe';
    try {
      const check = 'test -z "$FORKCACHE_PROBE_SECRET" || { echo "saw $FORKCACHE_PROBE_SECRET" >&2; exit 1; }';
      expect(probeProgram('sh', ['-c', check])).toBeUndefined();
      expect(probeProgram('sh', ['-c', check], process.env)).toBe('saw sk-ant-probe');
    } finally {
      delete process.env['FORKCACHE_PROBE_SECRET'];
    }
  });
});
