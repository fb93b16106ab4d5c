import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { AdmissionGate, type SpendPricing } from '../../../src/core/gate/admission/admission-gate.ts';
import { AdmissionScheduler } from '../../../src/core/gate/admission/scheduler.ts';
import { SpendCap } from '../../../src/core/gate/admission/spend-cap.ts';
import { OPEN_GATE } from '../../../src/core/loop/types.ts';

// `AdmissionGate.firstFloorNano`: the least the spend cap could ever hold for a fork's first
// request, which lets a fan-out end a queued fork `capped` before its turn (queue-cap.ts). It
// must never be above what the gate really holds for that request, whatever happens before it
// is sent: the prefix becoming readable, the first answered turn, larger outputs later.

// nano-dollars a token: input 3, cache write 4, cache read 0.3, output 15
const pricing = (cap: SpendCap): SpendPricing => ({
  cap,
  bound: (input, maxTokens) => Math.ceil(input * 4 + maxTokens * 15),
  price: (u) =>
    Math.ceil(
      u.input_tokens * 3 + u.cache_creation_input_tokens * 4 + u.cache_read_input_tokens * 0.3 + u.output_tokens * 15,
    ),
});

function fanOut(options: { canBeRead: boolean; counted?: boolean }) {
  const clock = new ManualClock(0);
  const cap = new SpendCap(1000);
  const state = { readable: false, shared: options.counted === false ? undefined : 20_000 };
  const gate = new AdmissionGate({
    scheduler: new AdmissionScheduler({ clock, mode: 'off', random: () => 0.5 }),
    inner: OPEN_GATE,
    prefixReadable: () => state.readable,
    prefixCanBeRead: options.canBeRead,
    turnsRead: true,
    modelClass: 'sonnet-4',
    tokensPerByte: () => 0.25,
    clock,
    spend: pricing(cap),
    sharedTokens: () => state.shared,
    headBytes: 80_000,
  });
  /** What the gate holds for a first request of `cost`, in nano-dollars. */
  const held = async (forkId: string, cost: { bytes: number; freshBytes: number; maxTokens: number }) => {
    const before = cap.view().reservedUsd;
    const permit = await gate.forFork(forkId).acquire({ turn: 1, first: true, cost });
    const nano = Math.round((cap.view().reservedUsd - before) * 1e9);
    return { nano, answer: (output: number) => permit.release({ status: 200, usage: usage(output) }) };
  };
  return { gate, state, held };
}

const usage = (output: number) => ({
  input_tokens: 0,
  cache_creation_input_tokens: 500,
  cache_read_input_tokens: 20_000,
  output_tokens: output,
});
const COST = { bytes: 90_000, freshBytes: 10_000, maxTokens: 4096 };

describe('AdmissionGate.firstFloorNano: never above what the gate will hold for that first request', () => {
  it('holds from a cold prefix to a warm one, through the first answered turn and larger outputs after it', async () => {
    const { gate, state, held } = fanOut({ canBeRead: true });
    const floor0 = gate.firstFloorNano(COST)!;
    // cold, nothing answered: the worst case is held, far above the floor
    const cold = await held('a', COST);
    expect(cold.nano).toBeGreaterThan(floor0);
    expect(gate.firstWorstNano(COST)).toBe(cold.nano);
    // when nothing could write the prefix any more (the fan-out says so), the worst case is the floor
    expect(gate.firstFloorNano(COST, false)).toBe(cold.nano);
    // warm, nothing answered yet: still the worst case
    state.readable = true;
    const warm = await held('b', COST);
    expect(warm.nano).toBe(cold.nano);
    // the first answer (a 1-token output) lowers the hold to the floor itself
    warm.answer(1);
    const small = await held('c', COST);
    expect(gate.firstFloorNano(COST)).toBe(floor0);
    expect(small.nano).toBe(floor0);
    // a larger output later raises both, the floor never above the hold
    small.answer(300);
    const floor1 = gate.firstFloorNano(COST)!;
    expect(floor1).toBeGreaterThan(floor0);
    expect((await held('d', COST)).nano).toBe(floor1);
    state.readable = false; // the entry expired: the hold goes back up, the floor stays
    expect((await held('e', COST)).nano).toBeGreaterThan(floor1);
    expect(gate.firstFloorNano(COST)).toBe(floor1);
  });

  it('is the worst case for a prefix that is never read, and unknown until the prefix is counted', async () => {
    const never = fanOut({ canBeRead: false });
    const floor = never.gate.firstFloorNano(COST)!;
    const first = await never.held('a', COST);
    expect(first.nano).toBe(floor);
    first.answer(1);
    expect((await never.held('b', COST)).nano).toBe(floor);
    expect(fanOut({ canBeRead: true, counted: false }).gate.firstFloorNano(COST)).toBeUndefined();
  });
});
