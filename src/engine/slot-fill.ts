import type OpenAI from 'openai';
import type { Clock } from '../clock.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import { dialectOf } from '../prefix/chat-dialects.ts';
import { closedChatHead } from '../provider/openai/body.ts';
import { sendChatBytes } from '../provider/openai/stream.ts';
import { chatWarmup } from '../provider/openai/warmup.ts';
import type { LlamaServerApi } from '../provider/llama-cpp/server-api.ts';
import type { UsageInput } from '../ledger/usage.ts';
import type { EngineSlots } from '../ledger/engine-figures.ts';
import type { FanOutAccounts } from './fan-out-accounts.ts';
import { type SlotFill, SlotPool } from './slot-pool.ts';
import type { WarmGate } from './warm-gate.ts';

/** What a llama-cpp fan-out learned and did before its forks (the summary's `engine.slots`). */
export type SlotReport = EngineSlots;

/** What the warm-up leaves for the forks: on llama.cpp, the slots they are pinned to. */
export interface WarmedUp {
  slots?: SlotPool | undefined;
  slotReport?: SlotReport | undefined;
}

export interface SlotFillRun {
  client: OpenAI;
  server: LlamaServerApi;
  prefix: FrozenPrefix;
  forks: number;
  fill: SlotFill;
  gate: WarmGate;
  accounts: FanOutAccounts;
  clock: Clock;
  log: (record: Record<string, unknown>) => void;
  signal: AbortSignal;
}

const encoder = new TextEncoder();

/** One small request pinned to a slot (the probe). */
async function tiny(run: SlotFillRun, slot: number, text: string): Promise<UsageInput> {
  const body = { model: run.prefix.snapshot.model, messages: [{ role: 'user', content: text }], max_tokens: 1 };
  const bytes = encoder.encode(JSON.stringify({ ...body, id_slot: slot, cache_prompt: true }));
  const at = run.clock.now();
  const { message } = await sendChatBytes(run.client, bytes, { signal: run.signal });
  run.accounts.probe(message.usage, at);
  return message.usage;
}

/**
 * Does a slot keep its prompt while a task starts on another? Three tiny requests: slot 0, slot
 * 1, slot 0 again. The third reads its prompt back on a server that keeps idle slots, and reads
 * nothing on one that clears them (llama-server without `-np`, unified KV cache).
 */
async function clearsIdleSlots(run: SlotFillRun): Promise<boolean> {
  const text = `forkcache slot probe ${run.prefix.id}`;
  await tiny(run, 0, text);
  await tiny(run, 1, `${text} (other slot)`);
  const again = await tiny(run, 0, text);
  return (again.cache_read_input_tokens ?? 0) === 0;
}

/** The warm-up pinned to one slot; its usage is recorded (the first one also measures the prefix). */
async function warmSlot(run: SlotFillRun, slot: number, measure: boolean): Promise<boolean> {
  const body = closedChatHead(run.prefix, dialectOf('llama-cpp'), undefined, { id_slot: slot });
  const shim = { beginWarming() {}, markWarm() {}, warmingFailed() {} };
  const measured = await chatWarmup({
    send: () => sendChatBytes(run.client, body, { signal: run.signal }).then((sent) => sent.message),
    gate: shim,
    clock: run.clock,
    log: (record) => run.log({ ...record, slot }),
  });
  if (!measured) return false;
  if (measure) {
    run.accounts.sharedTokens = measured.sharedTokens;
    run.accounts.warmup(measured.usage, measured.at, measured.cachedTokens);
  } else run.accounts.warmup(measured.usage, measured.at);
  return true;
}

/**
 * Fill a llama-server's slots with the frozen prefix before any fork is released: prefill it
 * once on slot 0 (the warm-up, which also measures it), then copy that slot's KV cache into
 * the others (`/slots/{id}?action=save|restore`), or, where the server does not allow it (no
 * `--slot-save-path`), prefill each slot. On a server that clears idle slots, the copy is made
 * just before each fork's request instead (see SlotPool); without copies there one slot serves
 * every fork in turn. The siblings wait for all of it (the warm gate opens at the end).
 */
export async function fillSlots(run: SlotFillRun, total: number): Promise<{ pool: SlotPool; report: SlotReport }> {
  const wanted = Math.max(1, Math.min(total, run.forks));
  run.gate.beginWarming();
  let warm = false;
  const report: SlotReport = { total, used: 1, fill: 'none', clears_idle: false, note: null };
  const finish = (pool: SlotPool): { pool: SlotPool; report: SlotReport } => {
    run.log({ type: 'slots', at: run.clock.now(), ...report });
    if (warm) run.gate.markWarm();
    else run.gate.warmingFailed(); // the first fork warms its slot itself
    return { pool, report };
  };
  try {
    report.clears_idle = wanted > 1 && (await clearsIdleSlots(run));
    warm = await warmSlot(run, 0, true);
    if (!warm || wanted === 1) return finish(new SlotPool(1, { clean: [0] }));
    const file = `forkcache-${run.prefix.id}.bin`;
    const saved = run.fill === 'warm-each' ? undefined : await run.server.save(0, file, run.signal);
    if (saved?.ok) {
      report.fill = 'copy';
      report.used = wanted;
      const restore = async (slot: number): Promise<void> => {
        const done = await run.server.restore(slot, file, run.signal);
        if (!done.ok) throw new Error(done.message);
      };
      if (report.clears_idle) return finish(new SlotPool(wanted, { clean: [0], restore }));
      for (let slot = 1; slot < wanted; slot++) await restore(slot);
      return finish(new SlotPool(wanted, { clean: Array.from({ length: wanted }, (_, i) => i) }));
    }
    if (saved && !saved.ok)
      report.note = `llama-server refuses slot copies (${saved.message}): ${report.clears_idle ? 'one slot serves every fork' : 'each slot prefills the prefix itself'}; start it with --slot-save-path DIR to prefill once`;
    if (report.clears_idle) {
      report.fill = 'one-slot';
      return finish(new SlotPool(1, { clean: [0] }));
    }
    report.fill = 'warm-each';
    report.used = wanted;
    const others = Array.from({ length: wanted - 1 }, (_, i) => i + 1);
    const ok = await Promise.all(others.map((slot) => warmSlot(run, slot, false)));
    return finish(new SlotPool(wanted, { clean: [0, ...others.filter((_, i) => ok[i])] }));
  } catch (err) {
    if (run.signal.aborted) throw err;
    report.note = `filling the slots failed (${(err as Error).message}): the forks share slot 0`;
    return finish(new SlotPool(1, { clean: warm ? [0] : [] }));
  }
}
