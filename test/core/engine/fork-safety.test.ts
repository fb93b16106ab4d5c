import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { bigSnapshot, sharedEmulator, workspace } from './helpers.ts';

/** A model that tries to escape the workspace and to fork from inside a fork, then reports. */
const hostile: ScriptedModel = {
  name: 'hostile',
  respond: ({ request }) => {
    // the fixture's shared history plus the directive is 5 messages: more means tools answered
    if (request.messages.length <= 5) {
      return {
        content: [
          { type: 'tool_use', name: 'read_file', input: { path: '../../../../etc/passwd' } },
          { type: 'tool_use', name: 'agent', input: { directive: 'fork again' } },
          { type: 'tool_use', name: 'bash', input: { command: 'touch pwned' } },
          { type: 'tool_use', name: 'write_file', input: { path: 'ok.txt', content: 'fine' } },
        ],
      };
    }
    return {
      content: [
        { type: 'text', text: 'Scope: safety\nResult: done\nKey files: ok.txt\nFiles changed: ok.txt\nIssues: none' },
      ],
    };
  },
};

/** A model that never stops calling tools. */
const looping: ScriptedModel = {
  name: 'looping',
  respond: () => ({ content: [{ type: 'tool_use', name: 'list_dir', input: { path: '.' } }] }),
};

const emulator = sharedEmulator({ scripts: { hostile, looping } });

describe('a fork cannot leave its workspace, spawn, or run what it is not allowed to', () => {
  it('refuses the escape, the spawn and bash; keeps the allowed write; records all of it', async () => {
    const ws = workspace();
    const runDir = workspace({});
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      headers: { 'x-forkcache-script': 'hostile' },
      workspace: ws,
      runDir,
      pool: { maxThreads: 1 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(), ['probe the limits']);
      const calls: { name: string; isError: boolean; code?: string | undefined }[] = [];
      for await (const e of fan)
        if (e.type === 'tool-call') calls.push({ name: e.name, isError: e.isError, code: e.code });
      const [fork] = (await fan.settled()).forks;
      expect(fork!.status).toBe('completed');
      expect(calls).toEqual([
        { name: 'read_file', isError: true, code: 'TOOL_PATH_ESCAPE' },
        { name: 'agent', isError: true, code: 'FORK_RECURSION' },
        { name: 'bash', isError: true, code: 'TOOL_NOT_ALLOWED' },
        { name: 'write_file', isError: false, code: undefined },
      ]);
      expect(fork!.filesChanged).toEqual(['ok.txt']);
      expect(readFileSync(join(ws, 'ok.txt'), 'utf8')).toBe('fine');
      expect(existsSync(join(ws, 'pwned'))).toBe(false);
      const transcript = readFileSync(fork!.transcriptPath!, 'utf8');
      expect(transcript).toContain('do this work directly');
      expect(transcript.split('\n').filter((l) => l.includes('"tool-start"'))).toHaveLength(4);
    } finally {
      await engine.close();
    }
  });
});

describe('a fork that cannot start', () => {
  it('fails with its own reason, not as a dead worker, and is not restarted', async () => {
    // a missing workspace is refused up front (issue 15, case 8); one removed after start is
    // found by the fork itself
    await expect(
      ForkEngine.create({
        baseURL: emulator.current.url,
        apiKey: 'test',
        workspace: join(workspace(), 'does-not-exist'),
      }),
    ).rejects.toThrow(/^workspace: .*does-not-exist does not exist$/);
    const ws = workspace();
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: ws,
      pool: { maxThreads: 1 },
    });
    rmSync(ws, { recursive: true, force: true });
    try {
      const fan = engine.fanOut(bigSnapshot(), ['read a.ts and report']);
      let restarts = 0;
      for await (const e of fan) if (e.type === 'fork-restart') restarts++;
      const [fork] = (await fan.settled()).forks;
      expect(fork!.status).toBe('failed');
      expect(fork!.error?.code).toBe('TOOL_CONFIG_INVALID');
      expect(restarts).toBe(0);
    } finally {
      await engine.close();
    }
  });
});

describe('maxTurns', () => {
  it('stops a fork that never finishes, keeping the turns it did', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      headers: { 'x-forkcache-script': 'looping' },
      workspace: workspace(),
      maxTurns: 3,
      pool: { maxThreads: 1 },
    });
    try {
      const [fork] = (await engine.fanOut(bigSnapshot(), ['loop forever']).settled()).forks;
      expect(fork!.status).toBe('failed');
      expect(fork!.error?.code).toBe('FORK_MAX_TURNS');
      expect(fork!.turns).toBe(3);
      expect(fork!.requests).toHaveLength(3);
      expect(fork!.messages.filter((m) => m.role === 'assistant')).toHaveLength(3);
    } finally {
      await engine.close();
    }
  });
});

describe('cancellation', () => {
  it('cancels a queued fork at once and a running one mid-request', async () => {
    const clock = new ManualClock(0);
    const emu = await startEmulator({ latency: 'realistic', clock });
    const engine = await ForkEngine.create({
      baseURL: emu.url,
      apiKey: 'test',
      workspace: workspace(),
      clock,
      pool: { maxThreads: 1, concurrentTasksPerWorker: 1 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`cancel-${Date.now()}`), ['read a.ts and report', 'read b.ts and report']);
      // wait (no clock movement) until the first fork's request is parked inside the emulator
      while (clock.pending === 0) await new Promise((r) => setImmediate(r));
      expect(fan.forks.map((f) => f.status)).toEqual(['running', 'queued']);
      fan.forks[1]!.cancel();
      fan.forks[0]!.cancel();
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['cancelled', 'cancelled']);
      expect(forks[1]!.turns).toBe(0);
      expect(forks[0]!.error?.code).toBe('FORK_CANCELLED');
      expect(summary.forks).toMatchObject({ total: 2, cancelled: 2 });
    } finally {
      await engine.close();
      await emu.close();
    }
  });

  it('an aborted signal cancels the whole fan-out', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.current.url,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 1, concurrentTasksPerWorker: 1 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(), ['read a.ts and report', 'read b.ts and report'], {
        signal: AbortSignal.abort(),
      });
      const { forks } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['cancelled', 'cancelled']);
      expect(forks.every((f) => f.turns === 0)).toBe(true);
    } finally {
      await engine.close();
    }
  });
});
