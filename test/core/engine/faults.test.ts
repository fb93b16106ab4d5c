import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FaultKind } from '../../../src/integrations/emulator/faults.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { bigSnapshot, workspace } from './helpers.ts';

const KINDS: FaultKind[] = ['429', '529', '500', '504', 'stream-error', 'reset'];

describe('faults: every fork completes, and no tool runs twice', () => {
  it('survives 429, 529, 500, 504, a mid-stream error and a reset on the first attempt of every turn', async () => {
    const seen = new Set<string>();
    let next = 0;
    const emulator = await startEmulator({
      latency: 'off',
      script: 'refactor',
      retryAfterSeconds: 0.001,
      // fail the first time each request body arrives, cycling through the fault kinds
      faultFor: (body) => {
        const key = createHash('sha256').update(JSON.stringify(body)).digest('hex');
        if (seen.has(key)) return 'none';
        seen.add(key);
        return KINDS[next++ % KINDS.length];
      },
    });
    const files = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`m${i}.ts`, `export const fetchData${''} = ${i};\n`]),
    );
    const ws = workspace(files);
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: ws,
      runDir: workspace({}),
      turnRetry: { baseMs: 0 },
      // the emulator's 1 ms retry-after, honoured (the default 1 s floor would only make this test slow)
      retryAfter: { floorMs: 1 },
      pool: { maxThreads: 2 },
    });
    try {
      const fan = engine.fanOut(
        bigSnapshot(`faults-${Date.now()}`),
        Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
      );
      let retries = 0;
      for await (const e of fan) if (e.type === 'turn-retry') retries++;
      const { forks } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(forks.map(() => 'completed'));
      for (const file of Object.keys(files)) expect(readFileSync(join(ws, file), 'utf8')).toContain('loadData');
      const faults = emulator.stats().requests.faults;
      for (const kind of KINDS) expect(faults[kind] ?? 0).toBeGreaterThan(0);
      expect(retries).toBeGreaterThan(0); // mid-stream errors are retried by the engine, not the SDK
      for (const fork of forks) {
        const ids = readFileSync(fork.transcriptPath!, 'utf8')
          .split('\n')
          .filter((l) => l.includes('"tool-start"'))
          .map((l) => (JSON.parse(l) as { id: string }).id);
        expect(new Set(ids).size).toBe(ids.length); // every tool call ran once
        expect(fork.requests.map((r) => r.turn)).toEqual([1, 2, 3, 4]);
      }
    } finally {
      await engine.close();
      await emulator.close();
    }
  });

  it('a fork that keeps failing stops after the bounded retries, says why, and keeps its transcript', async () => {
    const emulator = await startEmulator({ latency: 'off', faultFor: () => 'stream-error' });
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: workspace(),
      runDir: workspace({}),
      turnRetry: { retries: 2, baseMs: 0 },
      pool: { maxThreads: 1 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`down-${Date.now()}`), ['read a.ts and report']);
      let retries = 0;
      for await (const e of fan) if (e.type === 'turn-retry') retries++;
      const [fork] = (await fan.settled()).forks;
      expect(retries).toBe(2);
      expect(fork!.status).toBe('failed');
      expect(fork!.error?.code).toBe('FORK_API_ERROR');
      expect(readFileSync(fork!.transcriptPath!, 'utf8')).toMatch(/"type":"end","status":"failed"/);
    } finally {
      await engine.close();
      await emulator.close();
    }
  });
});

describe('a slow first byte beyond the client timeout', () => {
  it('times out, is retried with the same bytes, and the fork completes', async () => {
    const seen = new Set<string>();
    const emulator = await startEmulator({
      script: 'refactor',
      // no latency, except that a `slow` request waits a minute before its first byte
      latency: {
        baseMs: 0,
        prefillMsPerToken: 0,
        cacheReadMsPerToken: 0,
        outputTokensPerSecond: Infinity,
        slowFactor: 1,
        slowExtraMs: 60_000,
      },
      faultFor: (body) => {
        const key = createHash('sha256').update(JSON.stringify(body)).digest('hex');
        if (seen.has(key)) return 'none';
        seen.add(key);
        return 'slow';
      },
    });
    const ws = workspace({ 'a.ts': 'export const fetchData = 1;\n' });
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: ws,
      timeoutMs: 400,
      maxRetries: 2,
      pool: { maxThreads: 1 },
    });
    try {
      const [fork] = (
        await engine.fanOut(bigSnapshot(`slow-${Date.now()}`), ['rename fetchData to loadData in a.ts']).settled()
      ).forks;
      expect(fork!.status).toBe('completed');
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('export const loadData = 1;\n');
      expect(emulator.stats().requests.faults['slow']).toBe(fork!.turns); // every turn's first attempt was slow
    } finally {
      await engine.close();
      await emulator.close();
    }
  });
});
