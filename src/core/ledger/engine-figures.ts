import type { LedgerRecord } from './records.ts';
import { totalInputTokens } from './usage.ts';

/** What a llama-cpp fan-out learned of the server's slots and did with them (src/providers/llama-cpp/slot-fill.ts). */
export interface EngineSlots {
  /** The server's slots (`/props` `total_slots`; 0: the server has no `/props`). */
  total: number;
  /** Slots the fan-out used: at most one fork on each at a time. */
  used: number;
  /** How they got the prefix: one prefill then KV copies, a prefill each, one slot for all, or nothing. */
  fill: 'copy' | 'warm-each' | 'one-slot' | 'none';
  /** The server clears an idle slot when a task starts on another (llama-server's default without `-np`). */
  clears_idle: boolean;
  /** Said once when the fan-out could not do what it would have. */
  note: string | null;
  /** What the slot policy chose and why, in one line (`slots` in the table). */
  policy?: string | undefined;
  /** Each fork's KV cache saved and restored around other forks' requests (one request per slot hold). */
  switching?: SwitchFigures | null | undefined;
  /** What the slot policy chose and what it measured to choose it (src/providers/llama-cpp/slot-policy.ts). */
  choice?: SlotChoice | undefined;
}

/** The slot policy's choice: one slot switched, N slots with copies, or N slots switched. */
export interface SlotChoice {
  mode: 'one-slot-switched' | 'one-slot-recomputed' | 'slots-with-copies' | 'slots-switched';
  /** Requests it let run at once (after it decided). */
  at_once: number;
  why: string;
  /** What it had measured when it decided; null: the server alone decided (nothing to learn, or too few turns). */
  measured: SlotMeasures | null;
}

/** What the slot policy learned from the first turns. */
export interface SlotMeasures {
  /** Fork requests, and their time in the model as if each had run alone, on average (ms). */
  requests: number;
  model_ms: number;
  /** A fork's intervals without the model (between two requests, or its check after its last), and their average (ms). */
  gaps: number;
  tool_ms: number;
  /** N requests at once against one, from the forks' first requests (1: a CPU's cores split; near N: a GPU). */
  gain: number | null;
}

/** What KV switching did in a fan-out (src/providers/llama-cpp/slot-pool.ts). */
export interface SwitchFigures {
  /** Switching was on (off: a fork's later turn computes its own turns again). */
  on: boolean;
  /** A fork's KV cache saved to its file as another fork took its slot. */
  saves: number;
  /** A fork's own file restored before its later turn (the slot had served another fork since). */
  restores: number;
  /** The prefix copy restored into a slot that had lost it. */
  prefix_restores: number;
  /** A fork's later turn with no state of its own to restore: it computed its own turns again. */
  recomputed: number;
  save_ms: number;
  restore_ms: number;
  /** Most bytes the fan-out's files held at once (the server's `n_written`). */
  peak_bytes: number;
  /** Files dropped to stay under the bound. */
  evictions: number;
  /** Most requests in flight at once. */
  peak_requests: number;
  /** Time the forks spent between their requests (tools, checks, waiting for nothing) and holding a slot, summed. */
  outside_ms: number;
  inside_ms: number;
  /** Slot files left in the server's save path after the fan-out (0 when forkcache knows the folder). */
  files_left: number;
}

/**
 * A fan-out on a local engine (llama.cpp, vLLM, SGLang) in the engine's own terms: it has no
 * price, its cost is compute. `prefill_tokens` are the prompt tokens the engine computed (what
 * it did not read from its cache); `prefill_limit` is what a fan-out computes when only the
 * prefix is shared: the shared prefix once, plus each request's own part in full (a fork's first
 * request: what follows the prefix; a later turn: what follows the previous request's prompt
 * and output; at least one token each, which an engine always evaluates). A fork that reads
 * another fork's rules from its slot computes less (the ratio reads below 1). Times are summed
 * where the server reported them (llama.cpp's `timings`).
 */
export interface EngineFigures {
  requests: number;
  prefill_tokens: number;
  prefill_limit: number | null;
  /** `prefill_tokens / prefill_limit`: 1.0 is the best a fan-out can do. */
  prefill_ratio: number | null;
  /** Prompt-processing and generation time the server reported, ms (null: it reported none). */
  prompt_ms: number | null;
  predicted_ms: number | null;
  /** Requests whose times the server reported. */
  timed_requests: number;
}

/** The engine figures of one fan-out's records (the warm-ups, probes and forks of `prefixId`). */
export function engineFigures(records: readonly LedgerRecord[], prefixId: string): EngineFigures {
  const mine = records.filter((r) => r.prefixId === prefixId);
  const shared = Math.max(0, ...mine.map((r) => r.sharedPrefixTokens ?? 0));
  let prefill = 0;
  let promptMs = 0;
  let predictedMs = 0;
  let timed = 0;
  for (const r of mine) {
    prefill += r.usage.input_tokens + r.usage.cache_creation_input_tokens;
    if (r.usage.timings) {
      timed += 1;
      promptMs += r.usage.timings.prompt_ms;
      predictedMs += r.usage.timings.predicted_ms;
    }
  }
  // the prefix once (its size is what the warm-up measured: unknown without one)
  let limit = shared;
  const byFork = new Map<string, LedgerRecord[]>();
  for (const r of mine)
    if (r.kind !== 'warmup' && r.attempt !== 'failed') byFork.set(r.forkId, [...(byFork.get(r.forkId) ?? []), r]);
  for (const turns of byFork.values()) {
    turns.sort((a, b) => a.turn - b.turn || a.seq - b.seq);
    turns.forEach((r, i) => {
      const before = i === 0 ? undefined : turns[i - 1]!;
      const readable = before ? totalInputTokens(before.usage) + before.usage.output_tokens : shared;
      limit += Math.max(1, totalInputTokens(r.usage) - readable);
    });
  }
  const known = shared > 0;
  return {
    requests: mine.length,
    prefill_tokens: prefill,
    prefill_limit: known ? limit : null,
    prefill_ratio: known && limit > 0 ? prefill / limit : null,
    prompt_ms: timed > 0 ? promptMs : null,
    predicted_ms: timed > 0 ? predictedMs : null,
    timed_requests: timed,
  };
}
