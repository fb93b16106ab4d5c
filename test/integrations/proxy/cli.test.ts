import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cliArgs, firstLine } from '../../cli/run-cli.ts';
import { childParams, complete, emulator, sdk, words } from './helpers.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];

function start(args: string[]): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [...cliArgs(), 'proxy', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  return { child, out: () => out, err: () => err };
}

/** Resolves once stderr matches (on its data events: no timer, no polling). */
function stderrMatch(run: { child: ChildProcess; err: () => string }, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!pattern.test(run.err())) return;
      run.child.stderr!.off('data', check);
      resolve();
    };
    run.child.stderr!.on('data', check);
    run.child.once('exit', () => reject(new Error(`exited before stderr matched ${pattern}`)));
    check();
  });
}

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// Real child processes started through tsx: on a loaded machine (load average 45 on 2 cores) a
// start alone took most of the default 30 s. They wait on events; the bound is only a backstop.
describe('forkcache proxy (command)', () => {
  it('listens, forwards, and on SIGTERM prints the --json summary and writes the --report and the log', async () => {
    const emu = await emulator();
    const dir = mkdtempSync(join(tmpdir(), 'proxy-cli-'));
    dirs.push(dir);
    const run = start([
      '--upstream',
      emu.url,
      '--port',
      '0',
      '--warm-first',
      '--json',
      '--report',
      join(dir, 'proxy.html'),
      '--log-dir',
      join(dir, 'log'),
    ]);
    const line = await firstLine(run.child);
    const match = /^forkcache proxy listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    expect(match, line).not.toBeNull();
    const client = sdk(match![1]!);
    const shared = words(1500, 'cli');
    await Promise.all([0, 1, 2].map((i) => complete(client, childParams(shared, `directive ${i}`, i === 1))));
    const exited = once(run.child, 'exit');
    run.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code, run.err()).toBe(0);
    const summary = JSON.parse(run.out().trim().split('\n').pop()!) as {
      requests: { total: number };
      fanouts: { id: string; requests: number }[];
      report: string;
    };
    expect(summary.requests.total).toBe(3);
    expect(summary.fanouts).toEqual([expect.objectContaining({ requests: 3 })]);
    const html = readFileSync(summary.report, 'utf8');
    expect(html).toContain(`${summary.fanouts[0]!.id}: 3 requests`);
    expect(html.match(/<svg/g)?.length).toBe(4);
    expect(
      readFileSync(join(dir, 'log', 'exchanges.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(6);
    expect(run.err()).toMatch(/^#\d POST \/v1\/messages 200 /m);
  });

  it('a killed proxy leaves every exchange it recorded in the log, each line whole', async () => {
    const emu = await emulator();
    const dir = mkdtempSync(join(tmpdir(), 'proxy-kill-'));
    dirs.push(dir);
    const run = start(['--upstream', emu.url, '--log-dir', dir]);
    const url = /listening on (\S+)$/.exec(await firstLine(run.child))![1]!;
    const client = sdk(url);
    for (let i = 0; i < 3; i++) await complete(client, childParams(words(200, 'kill'), `directive ${i}`, i === 0));
    // Its progress line for #3 is printed after #3's log line is written.
    await stderrMatch(run, /^#3 /m);
    const exited = once(run.child, 'exit');
    run.child.kill('SIGKILL');
    await exited;
    const lines = readFileSync(join(dir, 'exchanges.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; seq: number });
    expect(lines.map((l) => `${l.type}${l.seq}`)).toEqual([
      'request1',
      'response1',
      'request2',
      'response2',
      'request3',
      'response3',
    ]);
  });

  it('exits 2 on a bad flag, naming it', async () => {
    const run = start(['--upstream', 'ftp://example.com']);
    const [code] = await once(run.child, 'exit');
    expect(code).toBe(2);
    expect(run.err()).toContain('--upstream');
  });
});
