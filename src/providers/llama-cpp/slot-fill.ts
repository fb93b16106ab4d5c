import type OpenAI from 'openai';
import type { Clock } from '../../core/util/clock.ts';
import type { FrozenPrefix } from '../../core/prefix/freeze.ts';
import { LLAMA_CHAT } from './dialect.ts';
import { chatRequestBody, closedChatHead } from '../openai/body.ts';
import { WRAPPED_DIRECTIVE_OPENING } from '../../core/fork/directive.ts';
import { FORK_BOILERPLATE_CLOSE } from '../../core/wire/fork-text.ts';
import { sendChatBytes } from '../openai/stream.ts';
import { chatWarmup } from '../openai/warmup.ts';
import type { LlamaServerApi } from './server-api.ts';
import type { UsageInput } from '../../core/ledger/usage.ts';
import type { EngineSlots } from '../../core/ledger/engine-figures.ts';
import type { WarmUpAccounts } from '../../core/engine/provider.ts';
import type { SlotFill } from '../../core/engine/bench-options.ts';
import { SlotPool } from './slot-pool.ts';
import { SlotFiles, slotFileStem } from './slot-files.ts';
import { judgeSwitching, LearningPolicy } from './slot-policy.ts';
import type { WarmGate } from '../../core/engine/warm-gate.ts';
import { ForkcacheError } from '../../core/util/errors.ts';

/** What a llama-cpp fan-out learned and did before its forks (the summary's `engine.slots`). */
export type SlotReport = EngineSlots;

/** What the warm-up leaves for the forks: on llama.cpp, the slots they are pinned to. */
export interface WarmedUp {
  slots?: SlotPool | undefined;
  slotReport?: SlotReport | undefined;
  /** The fan-out's slot files (deleted when it ends). */
  slotFiles?: SlotFiles | undefined;
  /** The slot policy, learning from the first turns. */
  policy?: LearningPolicy | undefined;
}

interface SlotFillRun {
  client: OpenAI;
  server: LlamaServerApi;
  prefix: FrozenPrefix;
  forks: number;
  fill: SlotFill;
  gate: WarmGate;
  accounts: WarmUpAccounts;
  clock: Clock;
  log: (record: Record<string, unknown>) => void;
  signal: AbortSignal;
  /** The fan-out's id: its slot files are named after it. */
  fanOutId: string;
  /** The server's `--slot-save-path` as this machine sees it (the files are deleted there). */
  saveDir?: string | undefined;
  maxBytes?: number | undefined;
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
  const body = closedChatHead(run.prefix, LLAMA_CHAT, undefined, { id_slot: slot });
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
 * The fork rules after the prefix, on a slot whose KV cache is about to be copied: every fork's
 * own part opens with the same rules (src/core/fork/directive.ts), so the copies hold them too and a
 * fork computes only its directive. A request of its own, after the warm-up that measures the
 * prefix (what is shared stays the prefix); recorded with the warm-ups. When it fails the forks
 * compute the rules themselves, as without it.
 */
async function extendWithRules(run: SlotFillRun, slot: number): Promise<void> {
  // without its trailing space: a fork's directive word takes the space into its first token
  const child = run.prefix.plan.continuation(WRAPPED_DIRECTIVE_OPENING.trimEnd());
  // the rules are in the boundary's tail blocks or in one message; what follows them (the
  // Qwen layout's acknowledgement and task prompt) comes after the directive, never shared
  const at = child.messages.findIndex((m) => JSON.stringify(m.content).includes(FORK_BOILERPLATE_CLOSE));
  const rules = { tailBlocks: child.tailBlocks, messages: child.messages.slice(0, at + 1) };
  const body = chatRequestBody(
    run.prefix,
    rules,
    { max_tokens: 1, id_slot: slot },
    {
      dialect: LLAMA_CHAT,
      marker: false,
    },
  );
  const sentAt = run.clock.now();
  try {
    const { message } = await sendChatBytes(run.client, body, { signal: run.signal });
    run.accounts.warmup(message.usage, sentAt);
    run.log({ type: 'slot-rules', at: run.clock.now(), slot, tokens: message.usage.input_tokens });
  } catch (err) {
    if (run.signal.aborted) throw err;
    run.log({ type: 'slot-rules-failed', at: run.clock.now(), slot, error: (err as Error).message });
  }
}

/** What the summary says once on a server that clears idle slots and allows no slot files. */
const CLEARING_NOTE =
  'llama-server clears idle slots (one unified KV cache: its default without -np): one slot takes every fork’s requests in turn; start it with -np N to compute N requests at a time';

/**
 * Fill a llama-server's slots with the frozen prefix before any fork is released, and choose how
 * the forks use them (the policy; its line is in the summary): prefill the prefix once on slot 0
 * (the warm-up, which also measures it) and save it (`/slots/0?action=save`: whether the server
 * allows slot files at all, and the copy). On a server that clears idle slots one slot takes every
 * fork's requests in turn (`auto`: several slots in one unified KV cache cost more than they
 * give, measured in docs/engines.md); on `-np N` the copy is restored into the other slots (with
 * the fork rules after the prefix), or, without slot files, each slot prefills the prefix. Either
 * way a fork holds a slot for one request, and where the files are allowed each fork's KV cache
 * is switched in and out of its slot between its turns (SlotPool). The siblings wait for all of
 * it (the warm gate opens at the end).
 */
export async function fillSlots(
  run: SlotFillRun,
  total: number,
): Promise<{ pool: SlotPool; report: SlotReport; files: SlotFiles; policy: LearningPolicy }> {
  const wanted = Math.max(1, Math.min(total, run.forks));
  run.gate.beginWarming();
  let warm = false;
  const files = new SlotFiles({ stem: slotFileStem(run.fanOutId), maxBytes: run.maxBytes, dir: run.saveDir });
  const report: SlotReport = { total, used: 1, fill: 'none', clears_idle: false, note: null };
  let policy!: LearningPolicy;
  const make = (size: number, clean: number[], switching: boolean, prefixFile?: string): SlotPool => {
    const pool = new SlotPool({
      size,
      clean,
      clears: report.clears_idle,
      clock: run.clock,
      actions: run.server,
      files: switching ? files : undefined,
      prefixFile,
      log: run.log,
      sharedTokens: () => run.accounts.sharedTokens,
    });
    pool.onSwitch = (p) => {
      const why = judgeSwitching(p);
      if (why) {
        p.stopped = why;
        run.log({ type: 'slot-switching-off', at: run.clock.now(), why });
      }
    };
    // a pool of one slot on a server that keeps idle slots: the fill failed, or `-np 1`
    const server = {
      slots: size === 1 && !report.clears_idle ? 1 : total,
      clearsIdle: report.clears_idle,
      forks: run.forks,
      files: switching,
      fill: run.fill,
    };
    policy = new LearningPolicy(server, (chosen) =>
      run.log({ type: 'slot-policy', at: run.clock.now(), ...chosen, measured: policy.decidedOn }),
    );
    policy.attach(pool);
    return pool;
  };
  const finish = (pool: SlotPool): { pool: SlotPool; report: SlotReport; files: SlotFiles; policy: LearningPolicy } => {
    run.log({ type: 'slots', at: run.clock.now(), ...report, switching: pool.switching, policy: policy.choice });
    if (warm) run.gate.markWarm();
    else run.gate.warmingFailed(); // the first fork warms its slot itself
    return { pool, report, files, policy };
  };
  try {
    report.clears_idle = wanted > 1 && (await clearsIdleSlots(run));
    warm = await warmSlot(run, 0, true);
    if (!warm) return finish(make(1, [], false));
    const oneSlot = wanted === 1 || (report.clears_idle && run.fill === 'auto');
    if (run.forks > 1 && oneSlot) report.fill = 'one-slot';
    if (!oneSlot && run.fill !== 'warm-each') await extendWithRules(run, 0);
    // whether the server allows slot files (switching needs them) and, for several slots, the copy
    const saved = await run.server.save(0, files.prefixName, run.signal);
    const canSave = saved.ok;
    if (!saved.ok)
      report.note = `llama-server refuses slot files (${saved.message}): ${oneSlot || report.clears_idle ? 'one slot takes every fork’s requests in turn' : 'each slot prefills the prefix itself'}, and a fork's later turn computes its own turns again; start it with --slot-save-path DIR`;
    if (oneSlot) return finish(make(1, [0], canSave));
    if (canSave && run.fill !== 'warm-each') {
      report.fill = 'copy';
      report.used = wanted;
      if (report.clears_idle) return finish(make(wanted, [0], true, files.prefixName));
      for (let slot = 1; slot < wanted; slot++) {
        const done = await run.server.restore(slot, files.prefixName, run.signal);
        if (!done.ok)
          throw new ForkcacheError(
            'API_ERROR',
            `llama-server could not copy the prefix into slot ${slot}: ${done.message}`,
          );
      }
      const all = Array.from({ length: wanted }, (_, i) => i);
      return finish(make(wanted, all, true, files.prefixName));
    }
    if (report.clears_idle) {
      report.fill = 'one-slot';
      report.note ??= CLEARING_NOTE;
      return finish(make(1, [0], canSave));
    }
    report.fill = 'warm-each';
    report.used = wanted;
    const others = Array.from({ length: wanted - 1 }, (_, i) => i + 1);
    const ok = await Promise.all(others.map((slot) => warmSlot(run, slot, false)));
    return finish(make(wanted, [0, ...others.filter((_, i) => ok[i])], canSave));
  } catch (err) {
    if (run.signal.aborted) throw err;
    report.note = `filling the slots failed (${(err as Error).message}): the forks share slot 0`;
    return finish(make(1, warm ? [0] : [], false));
  }
}
