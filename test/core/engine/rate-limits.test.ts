import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { bigSnapshot, driveClock, workspace } from './helpers.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatBudget } from '../../../src/cli/output/budget-line.ts';
import { writeRunReport } from '../../../src/integrations/report/write-report.ts';
import { driveFanOut } from '../../../bench/support/drive.ts';

const FILES = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`m${i}.ts`, `export const fetchData = ${i};\n`]));
const directives = (n: number): string[] =>
  Object.keys(FILES)
    .slice(0, n)
    .map((f) => `rename fetchData to loadData in ${f}`);
const limits = (rpm: number, extra: Record<string, unknown> = {}) => ({
  classes: { default: { rpm, itpm: 10_000_000, otpm: 10_000_000 } },
  ...extra,
});

async function setup(rateLimits: Record<string, unknown>, engineExtra: Record<string, unknown> = {}) {
  const clock = new ManualClock(Date.parse('2026-11-30T00:00:00Z'));
  const emulator = await startEmulator({ latency: 'off', script: 'refactor', clock, rateLimits });
  const runDir = workspace({});
  const engine = await ForkEngine.create({
    baseURL: emulator.url,
    apiKey: 'test',
    workspace: workspace(FILES),
    runDir,
    clock,
    pool: { maxThreads: 2 },
    ...engineExtra,
  });
  return { clock, emulator, engine, runDir, close: async () => (await engine.close(), await emulator.close()) };
}

describe('rate-limit admission', () => {
  it('paces a fan-out to the RPM it learned from the first response: no 429, no failed fork', async () => {
    const { clock, emulator, engine, runDir, close } = await setup(limits(12));
    try {
      const t0 = clock.now();
      const fan = engine.fanOut(bigSnapshot(`pace-${Date.now()}`), directives(8));
      const { forks, summary } = await driveClock(clock, fan.settled());
      expect(forks.map((f) => f.status)).toEqual(forks.map(() => 'completed'));
      expect(summary.requests).toBe(32);
      expect(summary.rate_limits).toMatchObject({ admission: 'on', http_429: 0 });
      expect(emulator.stats().requests.byStatus['429']).toBeUndefined();
      // 32 requests at 12 a minute with a 12-request burst: at least (32 - 12) / 12 minutes
      expect(clock.now() - t0).toBeGreaterThanOrEqual(100_000);
      expect(engine.admission.classes[0]).toMatchObject({
        modelClass: 'sonnet-4',
        limits: { rpm: 12, itpm: 10_000_000 },
        queued: 0,
        inFlight: 0,
      });
      // the board's line and the report's chart: the budget against the limits, over time
      expect(formatBudget(engine.admission)[0]).toMatch(
        /^budget sonnet-4 {2}RPM \d+\/12 {2}ITPM [\d,.KM]+\/10\.00M {2}OTPM [\d,.KM]+\/10\.00M {2}in flight 0 {2}queued 0$/,
      );
      const written = writeRunReport(runDir, { out: join(runDir, 'report.html') });
      const html = readFileSync(written.out, 'utf8');
      expect(html).toContain('<h3>Rate-limit budget</h3>');
      expect(html).toMatch(/This run met 0 429s and 0 529s/);
      expect(written.charts).toBe(5);
    } finally {
      await close();
    }
  });

  it('without admission the same fan-out trips 429s and retries each call on its own', async () => {
    const { clock, emulator, engine, close } = await setup(limits(12), {
      admission: 'off',
      maxRetries: 0,
      // a fork's retry waits on the worker's own (real) clock: 10 ms at most, not the 429's
      // `retry-after` (a second or more), and the emulator's clock moves one request's share of
      // the minute (RPM 12: 5 s) at each 429 it answers instead
      turnRetry: { retries: 20, baseMs: 0, maxMs: 10 },
    });
    emulator.on('request-end', (e) => e.status === 429 && clock.advance(5_000));
    try {
      const { forks, summary } = await driveClock(
        clock,
        engine.fanOut(bigSnapshot(`naive-${Date.now()}`), directives(8)).settled(),
      );
      expect(forks.every((f) => f.status === 'completed')).toBe(true);
      expect(summary.rate_limits.http_429).toBeGreaterThan(0);
      expect(emulator.stats().requests.byStatus['429']).toBe(summary.rate_limits.http_429);
    } finally {
      await close();
    }
  });

  it('absorbs a ramp_limit_exceeded burst: one backoff, a slower ramp, no error after the burst, every fork completes', async () => {
    const { clock, emulator, engine, close } = await setup(
      limits(1000, { ramp: { windowSeconds: 10, factor: 2, floor: 3 } }),
    );
    try {
      const refused: number[] = [];
      emulator.on('request-end', (e) => e.status === 429 && refused.push(clock.now()));
      // the bench's driver: time moves only when every request is parked (in the emulator or at the gate)
      const { forks, summary } = await driveFanOut(
        clock,
        emulator,
        () => engine.fanOut(bigSnapshot(`ramp-${Date.now()}`), directives(8)),
        { forks: 8, warm: 'first-child', gate: () => engine.admission },
      );
      expect(forks.map((f) => f.status)).toEqual(forks.map(() => 'completed'));
      expect(summary.rate_limits.ramp_limit_exceeded).toBeGreaterThan(0);
      expect(summary.rate_limits.ramp_limit_exceeded).toBe(refused.length);
      // only the siblings' first burst was refused: after it, the slower ramp never tripped the limit again
      expect(new Set(refused).size).toBe(1);
      expect(refused.length).toBeLessThanOrEqual(8); // at most one per fork: what was in flight when the first came back
    } finally {
      await close();
    }
  });

  it('stops at the spend cap without retrying, says why, and resume finishes the run once the cap is lifted', async () => {
    const { clock, emulator, engine, close } = await setup(limits(1000, { spendLimitUsd: 0.05 }));
    try {
      const fan = engine.fanOut(bigSnapshot(`spend-${Date.now()}`), directives(8));
      const { forks, summary } = await driveClock(clock, fan.settled());
      const stopped = forks.filter((f) => f.status !== 'completed');
      expect(stopped.length).toBeGreaterThan(0);
      for (const f of stopped) expect(f.error?.code).toBe('RATE_LIMIT_SPEND_CAP');
      expect(summary.rate_limits.stopped).toBe('enforced_spend_limit_reached');
      // no retries: at most one spend-cap 429 per fork (each one already in flight when the first came back)
      expect(emulator.stats().requests.byStatus['429']).toBe(summary.rate_limits.spend_limit_reached);
      expect(summary.rate_limits.spend_limit_reached).toBeLessThanOrEqual(stopped.length);
      const turnsBefore = stopped.map((f) => f.turns);

      emulator.rateLimits.setSpendLimit(undefined);
      const resumed = await driveClock(clock, engine.resume(summary.run_dir!).settled());
      expect(resumed.forks.map((f) => f.status)).toEqual(forks.map(() => 'completed'));
      // the stopped forks went on from their transcripts: no completed turn was sent again
      for (const [i, f] of stopped.entries()) {
        const again = resumed.forks.find((r) => r.forkId === f.forkId)!;
        expect(again.requests.map((r) => r.turn)).toEqual(Array.from({ length: again.turns }, (_, k) => k + 1));
        expect(again.turns).toBeGreaterThanOrEqual(turnsBefore[i]!);
      }
    } finally {
      await close();
    }
  });
});
