import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { cliArgs, firstLine } from '../../../cli/run-cli.ts';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];

function start(args: string[]): ChildProcess {
  const child = spawn(process.execPath, [...cliArgs(), 'emulator', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('forkcache emulator --api (command)', () => {
  it("serves DashScope's Chat Completions at /compatible-mode/v1, logs the exchange with its cache plan, exits on SIGTERM", async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'forkcache-emulator-openai-'));
    dirs.push(logDir);
    const child = start(['--provider', 'dashscope', '--port', '0', '--latency', 'off', '--log-dir', logDir]);
    const line = await firstLine(child);
    const url = /^forkcache emulator listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1];
    expect(url, line).toBeDefined();
    const api = new OpenAI({ apiKey: 'test', baseURL: `${url}/compatible-mode/v1`, maxRetries: 0 });
    const done = await api.chat.completions.create({
      model: 'qwen3-max',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'ping', cache_control: { type: 'ephemeral' } } as never] },
      ],
    });
    expect(done.choices[0]!.message.content).toMatch(/^Scope: ping/);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect((await exited)[0]).toBe(0);
    const [file] = readdirSync(logDir);
    const record = JSON.parse(readFileSync(join(logDir, file!), 'utf8'));
    expect(record.request.url).toBe('/compatible-mode/v1/chat/completions');
    expect(record.request.headers.authorization).toBe('Bearer ****');
    expect(record.cache.markers).toEqual([{ path: 'messages.0.content.0', ttl: '5m', tokens: expect.any(Number) }]);
  });

  it('exits 2 on an unknown provider, naming the choices (the old spelling --api too)', async () => {
    const child = start(['--api', 'gemini']);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr).toMatch(/--provider.*anthropic, openai, dashscope, deepseek/);
  });
});
