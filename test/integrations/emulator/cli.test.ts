import Anthropic from '@anthropic-ai/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cliArgs, firstLine } from '../../cli/run-cli.ts';
import { MODEL } from './helpers.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const children: ChildProcess[] = [];

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
});

describe('forkcache emulator (command)', () => {
  it('listens, answers the SDK, and exits cleanly on SIGTERM', async () => {
    const child = start(['--port', '0', '--latency', 'off', '--seed', '7']);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const line = await firstLine(child);
    const match = /^forkcache emulator listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
    expect(match, line).not.toBeNull();
    const api = new Anthropic({ apiKey: 'test', baseURL: match![1]!, maxRetries: 0 });
    const message = await api.messages.create({
      model: MODEL,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'ping' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Scope: ping/) });
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code, stderr).toBe(0);
  });

  it('exits 2 on a bad flag', async () => {
    const child = start(['--latency', 'warp']);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr).toContain('--latency');
  });
});
