import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { cliArgs, firstLine } from '../cli/run-cli.ts';
import { NORMAL_BODY, rawUpstream, type RawUpstream } from '../integrations/proxy/raw-upstream.ts';

/*
 * The attacker here is anyone who later reads what the proxy or the emulator wrote: the
 * exchange log, stderr, the HTML report, the `--json` summary. A request carries a distinct
 * canary in every credential header (and one the user names with --mask-header) and in every
 * credential query parameter; none may appear in any output. (Before: `api-key`,
 * `x-goog-api-key`, `anthropic-api-key`, `openai-api-key`, `x-auth-token` and query keys were
 * written in clear.) The same run checks that an upstream status 000 does not kill the
 * proxy process, and that a model name full of terminal escapes reaches stderr escaped.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];
const upstreams: RawUpstream[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

const canary = (name: string): string => `CANARY-${name}-${'q'.repeat(12)}-7f3a9c`;
const HEADERS = [
  'x-api-key',
  'authorization',
  'proxy-authorization',
  'api-key',
  'x-goog-api-key',
  'anthropic-api-key',
  'openai-api-key',
  'x-auth-token',
  'cookie',
  'x-corp-token', // named by the user with --mask-header
];
const PARAMS = ['key', 'api_key', 'APIKEY', 'access_token', 'Token', 'sig', 'api-key', 'client_secret'];
const headerValue = (h: string): string =>
  h === 'authorization' ? `Bearer ${canary(h)}` : h === 'cookie' ? `session=${canary(h)}; theme=dark` : canary(h);
const query = PARAMS.map((p) => `${encodeURIComponent(p)}=${canary(`q-${p}`)}`).join('&');
const everyCanary = [...HEADERS.map(canary), ...PARAMS.map((p) => canary(`q-${p}`)), canary('set-cookie')];
const HOSTILE_MODEL = 'claude\u001b]0;pwned\u0007-opus\u001b[2J\u202e\ninjected line';

/** What a hostile (or merely chatty) upstream answers: every request credential echoed back. */
function echoing401(): string {
  const echoed = HEADERS.map(canary).join(', ');
  const body = JSON.stringify({
    type: 'error',
    error: { type: 'authentication_error', message: `invalid x-api-key: ${echoed}` },
  });
  return [
    'HTTP/1.1 401 Unauthorized',
    'content-type: application/json',
    `request-id: req_${canary('x-api-key')}`,
    `x-debug-echo: ${echoed}`,
    `content-length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

function tmp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function leaks(where: string, text: string): string[] {
  return everyCanary.filter((c) => text.includes(c)).map((c) => `${where}: ${c}`);
}

describe('no credential in any output', () => {
  it('forkcache proxy: log, stderr, report and --json carry no key; it survives status 000; escapes reach stderr escaped', async () => {
    const upstream = await rawUpstream([
      (s) => s.end('HTTP/1.1 000 Zero\r\ncontent-length: 0\r\n\r\n'),
      (s) =>
        s.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nset-cookie: sid=${canary('set-cookie')}; HttpOnly\r\ncontent-length: ${Buffer.byteLength(NORMAL_BODY)}\r\n\r\n${NORMAL_BODY}`,
        ),
      (s) => s.end(echoing401()),
    ]);
    upstreams.push(upstream);
    const dir = tmp('fc-proxy-canary-');
    const child = spawn(
      process.execPath,
      [
        ...cliArgs(),
        'proxy',
        '--upstream',
        upstream.url,
        '--json',
        '--log-dir',
        join(dir, 'log'),
        '--report',
        join(dir, 'report.html'),
        '--mask-header',
        'X-Corp-Token',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const url = /listening on (\S+)$/.exec(await firstLine(child))![1]!;
    const headers = Object.fromEntries(HEADERS.map((h) => [h, headerValue(h)]));
    const send = (model: string) =>
      fetch(`${url}/v1/messages?beta=true&${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
        body: JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const first = await send('claude-opus-5-5');
    expect(first.status).toBe(502); // the upstream's status 000: the proxy's own 502, and it lives on
    const second = await send(HOSTILE_MODEL);
    expect(second.status).toBe(200);
    expect(await second.json()).toMatchObject({ id: 'msg_normal' });
    // the upstream echoes every credential it got, in its error, a header and the request id
    const third = await send('claude-opus-5-5');
    expect(third.status).toBe(401);
    await third.text();
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect((await exited)[0], err).toBe(0);

    const log = readFileSync(join(dir, 'log', 'exchanges.jsonl'), 'utf8');
    const report = readFileSync(join(dir, 'report.html'), 'utf8');
    expect([
      ...leaks('stdout (--json)', out),
      ...leaks('stderr', err),
      ...leaks('exchanges.jsonl', log),
      ...leaks('report.html', report),
    ]).toEqual([]);
    // Masked, not dropped: a reader still sees which credentials came in, and their last four characters.
    const request = JSON.parse(log.split('\n')[0]!) as { path: string; headers: Record<string, string> };
    for (const h of HEADERS) expect(request.headers[h], h).toMatch(/\*\*\*\*/);
    expect(request.headers['authorization']).toBe('Bearer ****3a9c');
    expect(request.path).toContain('api_key=****3a9c');
    expect(request.path).toContain('beta=true');
    const summary = JSON.parse(out.trim().split('\n').pop()!) as { requests: { total: number; errors: number } };
    expect(summary.requests).toMatchObject({ total: 3, errors: 2 });
    // masked, not dropped: the upstream's message is still there
    expect(log).toContain('invalid x-api-key: ****3a9c, ****3a9c');
    // The model name printed on stderr is escaped: no escape sequence, no forged line.
    // eslint-disable-next-line no-control-regex
    expect(err).not.toMatch(/\u001b|\u0007|\u202e/);
    expect(err).toContain('claude\\x1b]0;pwned\\x07-opus\\x1b[2J\\u202e\\x0ainjected line');
    expect(err.split('\n').filter((l) => l.startsWith('injected line'))).toEqual([]);
  }); // a real child process: a backstop for a loaded machine, not a time window

  it('the emulator --log-dir files carry no key (headers and query)', async () => {
    const logDir = tmp('fc-emu-canary-');
    const emu = await startEmulator({ latency: 'off', logDir, maskHeaders: ['X-Corp-Token'] });
    try {
      const headers = Object.fromEntries(HEADERS.map((h) => [h, headerValue(h)]));
      const res = await fetch(`${emu.url}/v1/messages?${query}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-opus-5-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
    } finally {
      await emu.close();
    }
    const text = readdirSync(logDir)
      .map((f) => readFileSync(join(logDir, f), 'utf8'))
      .join('\n');
    expect(text).toContain('"url"');
    expect(leaks('emulator log', text)).toEqual([]);
    const record = JSON.parse(text) as { request: { url: string; headers: Record<string, string> } };
    for (const h of HEADERS) expect(record.request.headers[h], h).toMatch(/\*\*\*\*/);
    expect(record.request.url).toMatch(/^\/v1\/messages\?key=\*\*\*\*3a9c&api_key=\*\*\*\*3a9c/);
  });
});
