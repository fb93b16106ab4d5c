import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { SlotPool, type RequestSample } from '../../../src/providers/llama-cpp/slot-pool.ts';
import {
  choosePolicy,
  GAIN_FOR_SLOTS,
  LearningPolicy,
  parallelGain,
  type PolicyServer,
  type TurnMeasures,
  turnMeasures,
} from '../../../src/providers/llama-cpp/slot-policy.ts';
import { OPEN_GATE, type GatePermit } from '../../../src/core/loop/types.ts';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const defaultServer: PolicyServer = { slots: 4, clearsIdle: true, forks: 8, files: true, fill: 'auto' };
const np4 = (forks: number): PolicyServer => ({ slots: 4, clearsIdle: false, forks, files: true, fill: 'auto' });

/*
 * Recorded on the real llama-server (tiny model, this project's 2-core machine under load), as
 * the summary's `engine.slots.choice.measured` reported them: the decision function must make the
 * same choice from them every time.
 */
const RECORDED = {
  /** 8 forks, a tool turn and a 4 s check each, the default server (llama-switching.test.ts). */
  checkDefault: { requests: 4, model_ms: 2118.5, gaps: 4, tool_ms: 535.5, gain: null },
  /** 16 forks, a `sleep 1` tool turn each, -np 4: the tiny model's four at once got through 5× one. */
  toolsNp4: { requests: 9, model_ms: 1693.2, gaps: 4, tool_ms: 1481.25, gain: 5.13 },
};

describe('choosePolicy: one slot switched, N slots with copies, or N slots switched', () => {
  it('before any turn: one slot on a server that clears idle slots, N switched on -np N, one for one fork', () => {
    expect(choosePolicy(defaultServer)).toMatchObject({ mode: 'one-slot-switched', atOnce: 1 });
    expect(choosePolicy(defaultServer).why).toMatch(/^the server clears idle slots/);
    expect(choosePolicy(np4(8))).toMatchObject({
      mode: 'slots-switched',
      atOnce: 4,
      why: '-np 4 keeps idle slots; nothing measured yet',
    });
    expect(choosePolicy(np4(3))).toMatchObject({ mode: 'slots-switched', atOnce: 3 });
    expect(choosePolicy(np4(1))).toMatchObject({ mode: 'one-slot-switched', atOnce: 1, why: 'one fork' });
    expect(choosePolicy({ ...np4(8), slots: 1 })).toMatchObject({ atOnce: 1, why: 'the server has one slot' });
    // without slot files nothing is switched: N slots keep their copies, one slot recomputes
    expect(choosePolicy({ ...np4(8), files: false })).toMatchObject({ mode: 'slots-with-copies', atOnce: 4 });
    expect(choosePolicy({ ...defaultServer, files: false })).toMatchObject({ mode: 'one-slot-recomputed' });
    // asked for copies on the default server: N slots, a copy before each request
    expect(choosePolicy({ ...defaultServer, fill: 'copy' })).toMatchObject({ mode: 'slots-switched', atOnce: 4 });
  });

  it('recorded on the default server: one slot switched, and the line says the model dominates there', () => {
    const chosen = choosePolicy(defaultServer, turnMeasures(RECORDED.checkDefault));
    expect(chosen).toMatchObject({ mode: 'one-slot-switched', atOnce: 1 });
    expect(chosen.why).toMatch(
      /the model dominates \(0\.5 s without the model against 2\.1 s in it per fork request: 6\.4 requests wanted at once\): on a GPU start it with -np N$/,
    );
  });

  it('recorded on -np 4: the model dominates and four at once got through more than one, so four slots switched', () => {
    const chosen = choosePolicy(np4(16), turnMeasures(RECORDED.toolsNp4));
    expect(chosen).toMatchObject({ mode: 'slots-switched', atOnce: 4 });
    expect(chosen.why).toMatch(/the model dominates .* and 4 requests at once got through 5\.13× as much as one$/);
  });

  it('tools and checks dominate: one slot keeps up, on either server', () => {
    // 8 forks, 0.3 s in the model per request, 4 s of check per request: 0.6 requests wanted at once
    const tools: TurnMeasures = { requests: 16, modelMs: 16 * 300, gaps: 16, toolMs: 16 * 4000, gain: 4 };
    expect(choosePolicy(np4(8), tools)).toMatchObject({ mode: 'one-slot-switched', atOnce: 1 });
    expect(choosePolicy(np4(8), tools).why).toMatch(/tools and checks dominate .*: one slot keeps up$/);
    expect(choosePolicy(defaultServer, tools).why).toMatch(/tools and checks dominate .*, one slot keeps up$/);
  });

  it('the model dominates on a CPU (N at once only split the cores): one slot; on a GPU (batched decoding): N slots', () => {
    const model = (gain: number | undefined): TurnMeasures => ({
      requests: 16,
      modelMs: 16 * 2000,
      gaps: 8,
      toolMs: 8 * 500,
      gain,
    });
    const cpu = choosePolicy(np4(8), model(1.05));
    expect(cpu).toMatchObject({ mode: 'one-slot-switched', atOnce: 1 });
    expect(cpu.why).toMatch(/4 requests at once got through only 1\.05× as much as one: N slots only split the cores$/);
    expect(choosePolicy(np4(8), model(undefined)).why).toMatch(
      /requests at once were not measured: N slots only split the cores$/,
    );
    expect(choosePolicy(np4(8), model(GAIN_FOR_SLOTS))).toMatchObject({ mode: 'slots-switched', atOnce: 4 });
    expect(choosePolicy(np4(8), model(3.6))).toMatchObject({ mode: 'slots-switched', atOnce: 4 });
    // without slot files the four keep their copies
    expect(choosePolicy({ ...np4(8), files: false }, model(3.6))).toMatchObject({ mode: 'slots-with-copies' });
    // the default server keeps one slot whatever was measured: N there lose each fork's state
    expect(choosePolicy(defaultServer, model(3.6))).toMatchObject({ mode: 'one-slot-switched', atOnce: 1 });
  });
});

const sample = (first: boolean, concurrency: number, serverMs: number): RequestSample => ({
  first,
  heldMs: serverMs + 5,
  concurrency,
  serverMs,
  tokens: 30,
});

describe('parallelGain: N requests at once against one, from the forks’ first requests', () => {
  it('about 1 where each of four takes four times as long (a CPU), about 4 where each takes as long as one (a GPU)', () => {
    expect(parallelGain([sample(true, 1, 100), ...Array.from({ length: 4 }, () => sample(true, 4, 400))])).toBeCloseTo(
      1,
    );
    expect(parallelGain([sample(true, 1, 100), ...Array.from({ length: 4 }, () => sample(true, 4, 110))])).toBeCloseTo(
      3.64,
      1,
    );
    // never more than the four at once: a slow baseline (a cold cache) is not a gain
    expect(parallelGain([sample(true, 1, 500), sample(true, 4, 100)])).toBe(4);
  });

  it('unmeasured without a request alone or one with others; later turns (another shape) are not compared', () => {
    expect(parallelGain([sample(true, 4, 400)])).toBeUndefined();
    expect(parallelGain([sample(true, 1, 100)])).toBeUndefined();
    expect(parallelGain([sample(true, 1, 100), sample(false, 4, 400)])).toBeUndefined();
  });
});

/** A request's usage as the worker reports it, with llama.cpp's timings. */
const report = (serverMs: number) => ({
  status: 200,
  usage: {
    input_tokens: 20,
    cache_read_input_tokens: 1000,
    cache_creation_input_tokens: 0,
    output_tokens: 10,
    timings: { prompt_ms: serverMs / 2, predicted_ms: serverMs / 2 },
  },
});

/**
 * 8 forks on a -np 4 pool with the learning policy, one request each and then a check of
 * `checkMs`: the first request alone (100 ms), then four at once taking `togetherMs` each.
 */
async function learn(togetherMs: number, checkMs: number) {
  const clock = new ManualClock(0);
  const pool = new SlotPool({ size: 4, clean: [0, 1, 2, 3], clears: false, clock });
  const decided: string[] = [];
  const policy = new LearningPolicy({ ...np4(8), files: false }, (c) => decided.push(c.mode));
  policy.attach(pool);
  const held = new Map<string, GatePermit>();
  const forks = Array.from({ length: 8 }, (_, i) => `f${i}`);
  for (const fork of forks)
    void pool
      .gate(fork, OPEN_GATE)
      .acquire({ turn: 1, first: true })
      .then((p) => held.set(fork, p));
  await tick();
  const first = [...held.keys()];
  expect(first, 'the first request runs alone').toHaveLength(1);
  clock.advance(100);
  held.get(first[0]!)!.release(report(100));
  held.delete(first[0]!);
  await tick();
  const wave = [...held.keys()];
  expect(wave, 'then four at once').toHaveLength(4);
  const releaseWave = (): void => {
    for (const fork of wave) {
      held.get(fork)!.release(report(togetherMs));
      held.delete(fork);
    }
  };
  // the first fork's check ends `checkMs` after its request, the wave `togetherMs` after its start
  if (checkMs < togetherMs) {
    clock.advance(checkMs);
    pool.forkEnded(first[0]!);
    clock.advance(togetherMs - checkMs);
    releaseWave();
  } else {
    clock.advance(togetherMs);
    releaseWave();
    clock.advance(checkMs - togetherMs);
    pool.forkEnded(first[0]!);
    clock.advance(togetherMs);
  }
  clock.advance(checkMs);
  for (const fork of wave) pool.forkEnded(fork);
  return { pool, policy, decided };
}

describe('LearningPolicy on a pool: measures the first turns, then decides once', () => {
  it('a CPU (four at once take four times as long) where the model dominates: one request at a time after the first wave', async () => {
    const { pool, policy, decided } = await learn(400, 20);
    expect(decided).toEqual(['one-slot-recomputed']);
    expect(pool.limit).toBe(1);
    // the first fork and three of the wave ended
    expect(policy.decidedOn).toMatchObject({ requests: 4, gaps: 4 });
    expect(policy.decidedOn!.gain).toBeCloseTo(1);
    // each as if alone: 100 ms
    expect(policy.decidedOn!.modelMs / policy.decidedOn!.requests).toBeCloseTo(100);
  });

  it('a GPU (four at once take as long as one): four at a time', async () => {
    const { pool, policy, decided } = await learn(100, 20);
    expect(decided).toEqual(['slots-with-copies']);
    expect(pool.limit).toBe(4);
    expect(policy.decidedOn!.gain).toBeCloseTo(4);
  });

  it('checks that dominate (5 s each after a 0.1 s request): one slot keeps up, whatever the gain', async () => {
    const { pool, decided } = await learn(100, 5000);
    expect(decided).toEqual(['one-slot-recomputed']);
    expect(pool.limit).toBe(1);
  });

  it('on a server that clears idle slots it does not hold the first request alone: one slot from the start', () => {
    const clock = new ManualClock(0);
    const pool = new SlotPool({ size: 1, clean: [0], clears: true, clock });
    const policy = new LearningPolicy(defaultServer);
    policy.attach(pool);
    expect(pool.limit).toBe(1);
    expect(policy.choice.mode).toBe('one-slot-switched');
  });
});
