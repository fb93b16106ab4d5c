import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { closedHeadBody } from '../../../src/providers/anthropic/measure.ts';
import { childRequestObject } from '../../../src/core/prefix/body.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { countTokensBytes } from '../../../src/providers/anthropic/send.ts';
import { bigSnapshot, driveClock, workspace } from './helpers.ts';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator;
let client: Anthropic;

beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off' });
  client = new Anthropic({ apiKey: 'test', baseURL: emulator.url, maxRetries: 0 });
});
afterAll(async () => {
  await emulator.close();
});

const DIRECTIVES = ['read a.ts and report', 'read b.ts and report', 'read c.ts and report', 'read d.ts and report'];
const encoder = new TextEncoder();

/** Exact input tokens of a child's first request, counted by the emulator itself. */
async function firstRequestTokens(snapshotTag: string, directive: string): Promise<number> {
  const prefix = freeze(bigSnapshot(snapshotTag));
  const { max_tokens: _m, ...request } = childRequestObject(prefix.shared, prefix.child(directive), { max_tokens: 1 });
  return countTokensBytes(client, encoder.encode(JSON.stringify(request)));
}

describe('ForkEngine.fanOut through real workers and the emulator', () => {
  it('runs every fork to its report and accounts the tokens exactly (first-child)', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 2 },
    });
    try {
      const tag = `exact-${Date.now()}:`;
      const fan = engine.fanOut(bigSnapshot(tag), DIRECTIVES);
      const seen: string[] = [];
      for await (const event of fan) seen.push(`${event.type}:${event.forkId}`);
      const { forks, summary } = await fan.settled();

      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
      expect(forks.map((f) => f.report?.scope)).toEqual(DIRECTIVES);
      // one name for a fork's id: handle, result and events agree
      expect(fan.forks.map((h) => h.forkId)).toEqual(forks.map((f) => f.forkId));
      for (const f of forks)
        expect(seen.filter((s) => s.endsWith(f.forkId)).map((s) => s.split(':')[0])).toEqual([
          'fork-start',
          'turn-start',
          'response-start',
          'turn-end',
          'fork-end',
        ]);

      // Hand computation from exact counts: S shared tokens, T_i each child's whole first request.
      const S = await countTokensBytes(client, closedHeadBody(fan.prefix));
      const T = await Promise.all(DIRECTIVES.map((d) => firstRequestTokens(tag, d)));
      expect(summary.prefix.shared_tokens).toBe(S);
      // cold cache: the warmer writes everything; each sibling reads S and writes its own part
      const written = T[0]! + T.slice(1).reduce((sum, t) => sum + (t - S), 0);
      expect(summary.usage).toMatchObject({
        input_tokens: 0,
        cache_read_input_tokens: 3 * S,
        cache_creation_input_tokens: written,
      });
      expect(summary.cache.max_fanout_reads).toBe(4 * S - S);
      expect(summary.cache.cache_efficiency).toBe(1);
      expect(summary.cache.fanout_hit_ratio).toBeCloseTo((3 * S) / T.reduce((a, b) => a + b, 0), 10);
      expect(summary.prefix.drift_events).toBe(0);
      expect(summary.warmups).toBe(1);
      expect(summary.forks).toMatchObject({ total: 4, completed: 4, failed: 0, cancelled: 0 });
      expect(summary.cost_usd.actual!).toBeLessThan(summary.cost_usd.no_cache!);
    } finally {
      await engine.close();
    }
  });

  it('prewarm: one max_tokens 0 request writes the head, then every child reads it', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: workspace(),
      warm: 'prewarm',
      pool: { maxThreads: 2 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`prewarm-${Date.now()}:`), DIRECTIVES.slice(0, 3));
      const { summary } = await fan.settled();
      const S = summary.prefix.shared_tokens!;
      expect(summary.requests).toBe(4); // warm-up + 3 children
      expect(summary.cache.fanout_requests).toBe(4);
      expect(summary.usage.cache_read_input_tokens).toBe(3 * S);
      expect(summary.cache.cache_efficiency).toBe(1);
      expect(summary.warmups).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it('writes a JSONL transcript per fork and a summary for the run', async () => {
    const runDir = workspace({});
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'secret-canary-key',
      workspace: workspace(),
      runDir,
      pool: { maxThreads: 1 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(), ['read a.ts and report']);
      const { forks } = await fan.settled();
      await engine.close();
      const lines = readFileSync(forks[0]!.transcriptPath!, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; directive?: string });
      // each request is written ahead (`request-start`): one left unanswered by a crash is known on resume
      expect(lines.map((l) => l.type)).toEqual(['start', 'request-start', 'turn', 'end']);
      expect(lines[0]!.directive).toBe('read a.ts and report');
      const summary = JSON.parse(readFileSync(`${runDir}/${fan.id}/summary.json`, 'utf8')) as {
        forks: { completed: number };
      };
      expect(summary.forks.completed).toBe(1);
      expect(readFileSync(forks[0]!.transcriptPath!, 'utf8')).not.toContain('secret-canary-key');
      const events = readFileSync(`${runDir}/${fan.id}/events.jsonl`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { type: string }).type);
      expect(events).toEqual([
        'fanout-start',
        'fork-start',
        'turn-start',
        'response-start',
        'turn-end',
        'fork-end',
        'fanout-end',
      ]);
    } finally {
      await engine.close();
    }
  });

  it('refuses bad input before anything is sent, naming the field', async () => {
    const engine = await ForkEngine.create({ baseURL: emulator.url, apiKey: 'test', workspace: workspace() });
    try {
      const before = emulator.stats().requests.total;
      expect(() => engine.fanOut(bigSnapshot(), [])).toThrow(/directives: expected a non-empty array/);
      expect(() => engine.fanOut(bigSnapshot(), ['ok', '  '])).toThrow(
        /directives\[1\]: a directive must not be empty/,
      );
      expect(() => engine.fanOut(bigSnapshot(), ['do x </fork-boilerplate> now'])).toThrow(
        /directives\[0\]: contains the <fork-boilerplate> tag/,
      );
      expect(emulator.stats().requests.total).toBe(before);
      await expect(ForkEngine.create({ pool: { maxThreads: 0 } })).rejects.toThrow(/pool\.maxThreads/);
      expect(() => engine.fanOut(captureSnapshot({ model: 'claude-opus-4-1', messages: [] }), ['x'])).toThrow(
        /snapshot\.model: "claude-opus-4-1" was retired.*use claude-opus-5-5/,
      );
      const huge = captureSnapshot({ model: 'claude-sonnet-4-6', system: 'x'.repeat(33 * 1024 * 1024), messages: [] });
      expect(() => engine.fanOut(huge, ['x'])).toThrow(/over the API's request limit of 33554432 bytes/);
      expect(emulator.stats().requests.total).toBe(before);
      await expect(ForkEngine.create({ warm: 'later' as 'none' })).rejects.toThrow(/warm/);
    } finally {
      await engine.close();
    }
  });
});

describe('warm-first versus simultaneous dispatch (emulated latency on an injected clock)', () => {
  async function runWith(warm: 'first-child' | 'none') {
    const clock = new ManualClock(1_000_000);
    const emu = await startEmulator({ latency: 'realistic', clock });
    const engine = await ForkEngine.create({
      baseURL: emu.url,
      apiKey: 'test',
      workspace: workspace(),
      warm,
      clock,
      pool: { maxThreads: 2 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`${warm}-${Date.now()}:`), DIRECTIVES);
      // With `none`, hold time still until all four first requests wait inside the emulator at
      // once: what simultaneous dispatch means. With `first-child` the gate releases siblings.
      let released = warm === 'first-child';
      const result = await driveClock(clock, fan.settled(), () => (released ||= clock.pending >= 4));
      return result.summary;
    } finally {
      await engine.close();
      await emu.close();
    }
  }

  it('first-child reads the whole shared prefix; none misses it in every sibling', async () => {
    const warm = await runWith('first-child');
    const none = await runWith('none');
    expect(warm.cache.cache_efficiency).toBe(1);
    expect(none.cache.cache_efficiency).toBe(0);
    expect(none.cost_usd.actual!).toBeGreaterThan(warm.cost_usd.actual!);
  });
});

describe('limits and lifecycle', () => {
  it('graceful degradation: with no parent snapshot the forks run on the fallback prompt and say so', async () => {
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 1 },
    });
    try {
      // Without options.model the fallback runs on the default model.
      const byDefault = engine.fanOut(undefined, ['read a.ts and report']);
      expect(byDefault.prefix.snapshot.model).toBe('claude-opus-5-5');
      expect((await byDefault.settled()).forks[0]?.status).toBe('completed');
      const fan = engine.fanOut(undefined, ['read a.ts and report', 'read b.ts and report'], {
        model: 'claude-sonnet-4-6',
      });
      const { forks, summary } = await fan.settled();
      expect(forks.map((f) => [f.status, f.sharing])).toEqual([
        ['completed', 'fallback'],
        ['completed', 'fallback'],
      ]);
      expect(summary.prefix.source).toBe('fallback');
      expect(fan.prefix.snapshot.messages).toEqual([]);
    } finally {
      await engine.close();
    }
  });

  it('keeps API concurrency separate from threads: never more requests in flight than allowed', async () => {
    let inFlight = 0;
    let peak = 0;
    const offStart = emulator.on('request-start', () => (peak = Math.max(peak, ++inFlight)));
    const offEnd = emulator.on('request-end', () => inFlight--);
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      workspace: workspace(),
      warm: 'none',
      concurrency: 2,
      pool: { maxThreads: 2, concurrentTasksPerWorker: 8 },
    });
    try {
      const fan = engine.fanOut(
        bigSnapshot(`limit-${Date.now()}`),
        Array.from({ length: 10 }, (_, i) => `read f${i}.ts and report`),
      );
      const { forks } = await fan.settled();
      expect(forks.every((f) => f.status === 'completed')).toBe(true);
      expect(peak).toBeLessThanOrEqual(2);
      expect(peak).toBeGreaterThanOrEqual(1);
    } finally {
      offStart();
      offEnd();
      await engine.close();
    }
  });

  it('destroy() stops running forks now and refuses new fan-outs', async () => {
    const clock = new ManualClock(0);
    const emu = await startEmulator({ latency: 'realistic', clock });
    const engine = await ForkEngine.create({
      baseURL: emu.url,
      apiKey: 'test',
      workspace: workspace(),
      clock,
      pool: { maxThreads: 1 },
    });
    try {
      const fan = engine.fanOut(bigSnapshot(`destroy-${Date.now()}`), ['read a.ts and report', 'read b.ts and report']);
      while (clock.pending === 0) await new Promise((r) => setImmediate(r));
      await engine.destroy();
      const { forks } = await fan.settled();
      expect(forks.map((f) => f.status)).toEqual(['cancelled', 'cancelled']);
      expect(() => engine.fanOut(bigSnapshot(), ['x'])).toThrow(expect.objectContaining({ code: 'ENGINE_DESTROYED' }));
    } finally {
      await emu.close();
    }
  });
});
