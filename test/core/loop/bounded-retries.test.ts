import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { AdmissionGate } from '../../../src/core/gate/admission/admission-gate.ts';
import { AdmissionScheduler } from '../../../src/core/gate/admission/scheduler.ts';
import { runForkLoop } from '../../../src/core/loop/run-fork.ts';
import { OPEN_GATE } from '../../../src/core/loop/types.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { bigSnapshot, driveClock, workspace } from '../engine/helpers.ts';

/*
 * Bounded retries (issue 25): an API that answers every request with a 429 and a hostile
 * `retry-after`. Before: `0` (or negative) sent 175 requests in the first second and 208 in
 * ten, `abc` retried every second forever, `1e12` overflowed the timer. Here the real loop,
 * the real SDK over HTTP to the emulator (fault injection: 429 on every request, the
 * `retry-after` written as given) and the real admission gate, all on one injected clock.
 */

const emulators: Emulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.close()));
});

// under the gate's own bound (100 rate-limited attempts a turn), so the time budget is what ends it
const BUDGET_MS = 60_000;

async function hammered(retryAfter: string | number) {
  const clock = new ManualClock(Date.parse('2026-12-01T00:00:00Z'));
  const emulator = await startEmulator({ latency: 'off', clock, faults: '429:1', retryAfterSeconds: retryAfter });
  emulators.push(emulator);
  const sent: number[] = [];
  emulator.on('request-end', (e) => e.status === 429 && sent.push(clock.now()));
  const sleeps: number[] = [];
  const sleep = clock.sleep.bind(clock);
  clock.sleep = (ms, signal) => (sleeps.push(ms), sleep(ms, signal));
  const scheduler = new AdmissionScheduler({ clock, mode: 'on', random: () => 0.5 });
  const gate = new AdmissionGate({
    scheduler,
    inner: OPEN_GATE,
    prefixReadable: () => true,
    turnsRead: true,
    modelClass: 'sonnet-4',
    tokensPerByte: () => 0.25,
    clock,
  }).forFork('f1');
  const prefix = freeze(bigSnapshot(`bounded-${retryAfter}-${Date.now()}`));
  const client = new Anthropic({ apiKey: 'test', baseURL: emulator.url, maxRetries: 0 });
  const started = clock.now();
  const outcome = await driveClock(
    clock,
    runForkLoop({
      prefix,
      child: prefix.child('read a.ts and report'),
      transport: { send: (body, options) => streamMessageBytes(client, body, options) },
      tools: createToolExecutor({ workspace: workspace() }),
      gate,
      gateRetries: true,
      clock,
      retry: { retries: 3, baseMs: 0, maxMs: 0, budgetMs: BUDGET_MS },
    }),
  );
  return { outcome, sent: sent.map((t) => t - started), sleeps, elapsed: clock.now() - started };
}

/** The most requests sent in any one second of (emulated) time. */
const perSecondPeak = (times: number[]): number =>
  Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1000).length));

describe('bounded retries against a hostile retry-after', () => {
  // 0 as a number: the emulator's option of old, so the same test shows what happened before
  for (const value of [0, '-5']) {
    it(`retry-after: ${value} → one request a second at most (the 1 s floor, +jitter), then FORK_RETRY_BUDGET`, async () => {
      const { outcome, sent, elapsed } = await hammered(value);
      expect(outcome.status).toBe('failed');
      expect(outcome.error).toMatchObject({
        code: 'FORK_RETRY_BUDGET',
        message: expect.stringMatching(
          /^turn 1: still failing after \d+ attempt\(s\) over \d+ s, past the retry budget of 60 s \(turnRetry\.budgetMs\); last error: FORK_API_ERROR: 429 /,
        ),
        data: { turn: 1, budgetMs: BUDGET_MS, last: { code: 'FORK_API_ERROR', data: { status: 429 } } },
      });
      expect(perSecondPeak(sent)).toBe(1);
      // 1.1 s apart (floor + half the jitter): about 55 requests in the budget, not thousands
      expect(sent.length).toBeGreaterThan(50);
      expect(sent.length).toBeLessThanOrEqual(BUDGET_MS / 1_000 + 1);
      expect(elapsed).toBeLessThan(BUDGET_MS + 2_000);
    });
  }

  it('retry-after: abc → the floor doubling (1.1 s, 2.2 s, 4.4 s, …, 66 s), then FORK_RETRY_BUDGET: not for ever', async () => {
    const { outcome, sent } = await hammered('abc');
    expect(outcome.error?.code).toBe('FORK_RETRY_BUDGET');
    const gaps = sent.slice(1).map((t, i) => t - sent[i]!);
    expect(gaps).toEqual([1_100, 2_200, 4_400, 8_800, 17_600, 35_200]);
  });

  for (const value of ['1e12', 'Wed, 01 Jan 2099 00:00:00 GMT']) {
    it(`retry-after: ${value} → capped at the 60 s ceiling (+jitter): no wait is longer, no timer overflows`, async () => {
      const { outcome, sent, sleeps } = await hammered(value);
      expect(outcome.error?.code).toBe('FORK_RETRY_BUDGET');
      expect(Math.max(...sleeps)).toBe(66_000);
      expect(sent.slice(1).map((t, i) => t - sent[i]!)).toEqual([66_000]);
    });
  }
});

describe('without admission (issue 44: the SDK never resends a request that may be billed)', () => {
  it("a 429's retry-after sets the turn's backoff (2 s, not 100/200/400 ms), within turnRetry.maxMs", async () => {
    const clock = new ManualClock(Date.parse('2026-12-01T00:00:00Z'));
    const emulator = await startEmulator({ latency: 'off', clock, faults: '429:1', retryAfterSeconds: 2 });
    emulators.push(emulator);
    const sent: number[] = [];
    emulator.on('request-end', (e) => e.status === 429 && sent.push(clock.now()));
    const prefix = freeze(bigSnapshot(`no-admission-${Date.now()}`));
    // the client's own retries asked for: none happen on a fork's request
    const client = new Anthropic({ apiKey: 'test', baseURL: emulator.url, maxRetries: 3 });
    const run = (maxMs: number) =>
      driveClock(
        clock,
        runForkLoop({
          prefix,
          child: prefix.child('read a.ts and report'),
          transport: { send: (body, options) => streamMessageBytes(client, body, options) },
          tools: createToolExecutor({ workspace: workspace() }),
          gate: OPEN_GATE,
          clock,
          retry: { retries: 3, baseMs: 100, maxMs },
        }),
      );
    const outcome = await run(8_000);
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({ code: 'FORK_API_ERROR', data: { status: 429 } });
    expect(sent.slice(1).map((t, i) => t - sent[i]!)).toEqual([2_000, 2_000, 2_000]);
    sent.length = 0;
    await run(500);
    expect(sent.slice(1).map((t, i) => t - sent[i]!)).toEqual([500, 500, 500]);
  });
});
