import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { firstLine } from '../../cli/run-cli.ts';

/*
 * Ctrl-C at a terminal signals the whole foreground process group. Run from a source checkout
 * (`node --import tsx`), that group holds tsx's esbuild service, which stops on SIGINT: a
 * module the proxy first imported after the signal (its report) failed with "The service is no
 * longer running" and no report was written. Played here as the terminal does it: the proxy in
 * a process group of its own, SIGINT to the group, tsx's transform cache off (a fresh clone).
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let emulator: Awaited<ReturnType<typeof startEmulator>>;
beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off' });
});
afterAll(() => emulator.close());

describe('forkcache proxy --report and Ctrl-C', () => {
  it('writes the report after SIGINT to its whole process group', async () => {
    const report = join(mkdtempSync(join(tmpdir(), 'fc-proxy-report-')), 'report.html');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'proxy', '--upstream', emulator.url, '--report', report],
      {
        cwd: ROOT,
        detached: true, // its own process group, as a terminal's foreground job
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, TSX_DISABLE_CACHE: '1' },
      },
    );
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const url = /listening on (\S+)$/.exec(await firstLine(child))![1]!;
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-ant-t' },
      body: JSON.stringify({ model: 'claude-opus-5-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const exited = once(child, 'close');
    process.kill(-child.pid!, 'SIGINT');
    expect((await exited)[0], err).toBe(0);
    expect(err).toMatch(/report written to/);
    expect(existsSync(report)).toBe(true);
    expect(readFileSync(report, 'utf8')).toContain('<svg');
  });
});
