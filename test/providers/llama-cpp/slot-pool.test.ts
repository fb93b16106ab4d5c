import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { SlotFiles, removeFanOutSlotFiles, slotFileStem } from '../../../src/providers/llama-cpp/slot-files.ts';
import { type SlotActions, SlotPool } from '../../../src/providers/llama-cpp/slot-pool.ts';
import { judgeSwitching } from '../../../src/providers/llama-cpp/slot-policy.ts';
import { OPEN_GATE, type GatePermit } from '../../../src/core/loop/types.ts';
import type { SlotActionResult } from '../../../src/providers/llama-cpp/server-api.ts';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The server's slot actions as llama-server answers them, over an in-memory model of its slots:
 * what each slot holds (`fork:tokens`), saved files, and every action in order.
 */
class Slots implements SlotActions {
  readonly held = new Map<number, { owner: string; tokens: number }>();
  readonly files = new Map<string, { owner: string; tokens: number }>();
  readonly actions: string[] = [];
  /** Tokens a save answers with instead of what the slot holds (a slot cleared before the save). */
  saveAnswers: number | undefined;
  /** `dir`: the save path, where a save writes its file as the server does. */
  dir: string | undefined;
  constructor(
    readonly clock = new ManualClock(0),
    readonly msPerAction = 1,
  ) {}

  async save(slot: number, file: string): Promise<SlotActionResult> {
    this.clock.advance(this.msPerAction);
    const held = this.held.get(slot) ?? { owner: '', tokens: 0 };
    const tokens = this.saveAnswers ?? held.tokens;
    this.files.set(file, { ...held, tokens });
    if (this.dir) writeFileSync(join(this.dir, file), `${held.owner}:${tokens}`);
    this.actions.push(`save ${slot}:${held.owner}`);
    return { ok: true, tokens, bytes: tokens * 100 };
  }

  async restore(slot: number, file: string): Promise<SlotActionResult> {
    this.clock.advance(this.msPerAction);
    const saved = this.files.get(file);
    if (!saved) return { ok: false, status: 400, message: 'no such file' };
    this.held.set(slot, saved);
    this.actions.push(`restore ${slot}:${saved.owner}`);
    return { ok: true, tokens: saved.tokens, bytes: saved.tokens * 100 };
  }
}

const usage = (prompt: number) => ({
  status: 200,
  usage: {
    input_tokens: 10,
    cache_read_input_tokens: prompt - 10,
    cache_creation_input_tokens: 0,
    output_tokens: 4,
    timings: { prompt_ms: 50, predicted_ms: 5 },
  },
});

function poolOn(
  slots: Slots,
  options: { size?: number; clears?: boolean; maxBytes?: number; dir?: string; switching?: boolean } = {},
) {
  const files = new SlotFiles({ stem: slotFileStem('fo001-test'), maxBytes: options.maxBytes, dir: options.dir });
  const pool = new SlotPool({
    size: options.size ?? 1,
    // -np N: the prefix was copied into every slot before the forks
    clean: options.clears === false ? Array.from({ length: options.size ?? 1 }, (_, i) => i) : [0],
    clears: options.clears ?? true,
    clock: slots.clock,
    actions: slots,
    files: options.switching === false ? undefined : files,
    prefixFile: files.prefixName,
    sharedTokens: () => 1000,
  });
  slots.files.set(files.prefixName, { owner: '', tokens: 1000 });
  return { pool, files };
}

/** One request of `fork` through the pool: the server then holds its prompt and output on the slot. */
async function request(slots: Slots, pool: SlotPool, fork: string, prompt: number): Promise<number> {
  const permit = await pool.gate(fork, OPEN_GATE).acquire({ turn: 1, first: false });
  permit.started();
  slots.held.set(permit.slot!, { owner: fork, tokens: prompt + 4 });
  permit.release(usage(prompt));
  return permit.slot!;
}

describe('SlotPool: a slot held for one request, each fork’s KV cache switched in and out', () => {
  it('the permit names the slot, and between two of its turns a fork holds nothing', async () => {
    const slots = new Slots();
    const { pool } = poolOn(slots);
    const a = await pool.gate('a', OPEN_GATE).acquire({ turn: 1, first: true });
    expect(a.slot).toBe(0);
    let bGot: GatePermit | undefined;
    const b = pool
      .gate('b', OPEN_GATE)
      .acquire({ turn: 1, first: true })
      .then((p) => (bGot = p));
    await tick();
    expect(bGot).toBeUndefined(); // one slot: b waits for a's request, not for a's whole fork
    slots.held.set(0, { owner: 'a', tokens: 1100 });
    a.started();
    a.release(usage(1100));
    await b;
    expect(bGot!.slot).toBe(0);
    // b's first turn reads the prefix from a's prompt; a will come back, so its state was saved first
    expect(slots.actions).toEqual(['save 0:a']);
    bGot!.started();
    slots.held.set(0, { owner: 'b', tokens: 1104 });
    bGot!.release(usage(1100));
    // a's second turn: b's state saved (b may come back), a's own restored
    await request(slots, pool, 'a', 1200);
    expect(slots.actions).toEqual(['save 0:a', 'save 0:b', 'restore 0:a']);
    // a again at once: the slot still holds it, nothing to switch
    await request(slots, pool, 'a', 1300);
    expect(slots.actions).toHaveLength(3);
    // b ended: nobody needs its state; a's next turn after another fork's first saves only a
    pool.forkEnded('b');
    await request(slots, pool, 'c', 1100);
    expect(slots.actions.slice(3)).toEqual(['save 0:a']);
    await request(slots, pool, 'a', 1400);
    expect(slots.actions.slice(4)).toEqual(['save 0:c', 'restore 0:a']);
    expect(pool.figures).toMatchObject({ saves: 4, restores: 2, recomputed: 0 });
    expect(pool.peakInFlight).toBe(1);
  });

  it('nobody waiting, nothing saved: a fork alone on the slot is never switched', async () => {
    const slots = new Slots();
    const { pool } = poolOn(slots);
    for (const prompt of [1100, 1200, 1300]) await request(slots, pool, 'a', prompt);
    expect(slots.actions).toEqual([]);
  });

  it('a save that finds its slot cleared (fewer tokens than the prompt) is not kept: the fork computes its turns again', async () => {
    const slots = new Slots();
    const { pool } = poolOn(slots);
    await request(slots, pool, 'a', 1100);
    slots.saveAnswers = 0;
    await request(slots, pool, 'b', 1100);
    slots.saveAnswers = undefined;
    await request(slots, pool, 'a', 1200);
    expect(slots.actions).toEqual(['save 0:a', 'save 0:b']); // nothing of a's to restore
    expect(pool.figures).toMatchObject({ saves: 1, restores: 0, recomputed: 1 });
  });

  it('the files stay under their bound: the least recently used fork falls back to recomputing, its file deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-slot-files-'));
    const slots = new Slots();
    slots.dir = dir;
    // each state is ~1,104 tokens × 100 bytes: room for two
    const { pool, files } = poolOn(slots, { maxBytes: 250_000, dir });
    writeFileSync(join(dir, files.prefixName), 'prefix');
    await request(slots, pool, 'a', 1100);
    await request(slots, pool, 'b', 1100);
    await request(slots, pool, 'c', 1100);
    expect(readdirSync(dir)).toHaveLength(3);
    await request(slots, pool, 'd', 1100); // saves c: a's file (the oldest) goes
    expect(files.evictions).toBe(1);
    await request(slots, pool, 'b', 1200); // saves d: c's file goes, not b's (about to be restored)
    expect(pool.figures).toMatchObject({ restores: 1, evictions: 2, recomputed: 0 });
    await request(slots, pool, 'a', 1200);
    expect(pool.figures.recomputed).toBe(1);
    expect(files.totalBytes).toBeLessThanOrEqual(250_000);
    expect(pool.figures.peak_bytes).toBeLessThanOrEqual(250_000);
    expect(readdirSync(dir)).toHaveLength(3); // the prefix and two forks' files
    expect(files.close()).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a fork that ends while its state is being saved leaves no file behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-slot-race-'));
    const slots = new Slots();
    slots.dir = dir;
    const { pool, files } = poolOn(slots, { dir });
    await request(slots, pool, 'a', 1100);
    const save = slots.save.bind(slots);
    let proceed!: () => void;
    slots.save = async (slot, file) => {
      await new Promise<void>((resolve) => (proceed = resolve));
      return save(slot, file);
    };
    const b = pool.gate('b', OPEN_GATE).acquire({ turn: 1, first: true });
    await tick();
    pool.forkEnded('a'); // a's last turn is over; b's taking the slot is saving it meanwhile
    proceed();
    const permit = await b;
    permit.started();
    permit.release(usage(1100));
    expect(readdirSync(dir)).toEqual([]);
    expect(files.close()).toEqual([]);
  });

  it('-np N: a fork goes back to the slot that still holds it; the others take a free one, side by side', async () => {
    const slots = new Slots();
    const { pool } = poolOn(slots, { size: 2, clears: false });
    const a = await pool.gate('a', OPEN_GATE).acquire({ turn: 1, first: true });
    const b = await pool.gate('b', OPEN_GATE).acquire({ turn: 1, first: true });
    expect([a.slot, b.slot].sort()).toEqual([0, 1]);
    expect(pool.peakInFlight).toBe(2);
    for (const [p, fork] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      slots.held.set(p.slot!, { owner: fork, tokens: 1104 });
      p.started();
      p.release(usage(1100));
    }
    expect(await request(slots, pool, 'b', 1200)).toBe(b.slot);
    expect(await request(slots, pool, 'a', 1200)).toBe(a.slot);
    expect(slots.actions).toEqual([]);
  });

  it('-np N, fewer requests at once than slots (the policy chose one): a waiting fork gets the idle slot that still holds it, not the one just freed', async () => {
    const slots = new Slots();
    const { pool } = poolOn(slots, { size: 2, clears: false });
    pool.setLimit(1);
    expect(await request(slots, pool, 'a', 1100)).toBe(0); // a's state stays on slot 0
    const b = await pool.gate('b', OPEN_GATE).acquire({ turn: 1, first: true });
    expect(b.slot).toBe(1); // the slot nobody needs
    // a's second turn while b's request is in flight: one at a time, it waits
    let aGot: GatePermit | undefined;
    const a = pool
      .gate('a', OPEN_GATE)
      .acquire({ turn: 2, first: false })
      .then((p) => (aGot = p));
    await tick();
    expect(aGot).toBeUndefined();
    slots.held.set(1, { owner: 'b', tokens: 1104 });
    b.started();
    b.release(usage(1100));
    await a;
    // slot 0 is free and still holds a: nothing to save, nothing to restore, nothing recomputed
    expect(aGot!.slot).toBe(0);
    expect(slots.actions).toEqual([]);
    expect(pool.figures.recomputed).toBe(0);
    aGot!.started();
    aGot!.release(usage(1200));
  });

  it('a later turn whose attempt failed (no usage: what its slot holds is unknown) computes its own turns again, and says why', async () => {
    const slots = new Slots();
    const records: Record<string, unknown>[] = [];
    const files = new SlotFiles({ stem: slotFileStem('fo001-test') });
    const pool = new SlotPool({
      size: 2,
      clean: [0, 1],
      clears: false,
      clock: slots.clock,
      actions: slots,
      files,
      prefixFile: files.prefixName,
      sharedTokens: () => 1000,
      log: (r) => records.push(r),
    });
    slots.files.set(files.prefixName, { owner: '', tokens: 1000 });
    expect(await request(slots, pool, 'a', 1100)).toBe(0);
    const failed = await pool.gate('a', OPEN_GATE).acquire({ turn: 2, first: false });
    expect(failed.slot).toBe(0);
    failed.release({ status: null }); // a dropped connection: the loop retries the turn
    await request(slots, pool, 'a', 1200);
    expect(pool.figures.recomputed).toBe(1);
    expect(records.filter((r) => r['type'] === 'slot-recompute')).toMatchObject([
      { forkId: 'a', why: 'no file of its state' },
    ]);
  });

  it('a server that clears idle slots, several slots: no request starts between a restore and the server taking the request', async () => {
    const slots = new Slots();
    const { pool } = poolOn(slots, { size: 2, clears: true });
    await request(slots, pool, 'a', 1100); // slot 0
    const b = await pool.gate('b', OPEN_GATE).acquire({ turn: 1, first: true });
    expect(b.slot).toBe(1); // a's state stays on slot 0: b takes the other, given the prefix copy
    expect(slots.actions).toEqual(['restore 1:']);
    // b's start clears the idle slot 0 (the server moves it to host memory): a's state is gone there
    let aGot: GatePermit | undefined;
    const a = pool
      .gate('a', OPEN_GATE)
      .acquire({ turn: 2, first: false })
      .then((p) => (aGot = p));
    await tick();
    expect(aGot).toBeUndefined(); // b has not begun at the server: nothing else may start
    b.started();
    await a;
    expect(aGot!.slot).toBe(0);
    // nothing of a's was saved (nobody waited when its request ended): it computes its turn again
    expect(pool.figures.recomputed).toBe(1);
    expect(slots.actions).toEqual(['restore 1:', 'restore 0:']);
    aGot!.release(usage(1200));
    b.release(usage(1100));
  });

  it('the policy turns switching off where a save and a restore cost more than computing a fork’s own turns', async () => {
    const slow = new Slots(new ManualClock(0), 400); // 400 ms per action against 5 ms a token × ~100 own tokens
    const { pool } = poolOn(slow);
    for (const fork of ['a', 'b', 'a', 'b', 'a']) {
      await request(slow, pool, fork, 1100);
      judgeSwitching(pool);
    }
    expect(pool.switching).toBe(false);
    const fast = new Slots(new ManualClock(0), 1);
    const cheap = poolOn(fast).pool;
    for (const fork of ['a', 'b', 'a', 'b', 'a']) {
      await request(fast, cheap, fork, 1100);
      expect(judgeSwitching(cheap)).toBeUndefined();
    }
    expect(cheap.switching).toBe(true);
  });

  it('forkcache clean: deletes the slot files a stopped fan-out left, not another fan-out’s or program’s', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-slot-clean-'));
    for (const name of [
      'forkcache-fo001-x-0.bin',
      'forkcache-fo001-x-prefix.bin',
      'forkcache-fo001-xy-0.bin',
      'mine.bin',
    ])
      writeFileSync(join(dir, name), 'x');
    expect(removeFanOutSlotFiles(dir, 'fo001-x', true)).toEqual([
      'forkcache-fo001-x-0.bin',
      'forkcache-fo001-x-prefix.bin',
    ]);
    expect(readdirSync(dir)).toHaveLength(4); // a dry run removes nothing
    expect(removeFanOutSlotFiles(dir, 'fo001-x')).toHaveLength(2);
    expect(readdirSync(dir).sort()).toEqual(['forkcache-fo001-xy-0.bin', 'mine.bin']);
    expect(removeFanOutSlotFiles(join(dir, 'missing'), 'fo001-x')).toEqual([]);
  });
});
