import { cachedTurns } from './cache-turns.ts';
import type { Usage } from './usage.ts';

/**
 * The one "fresh agents" baseline (issue 27: it meant three things). The question it answers:
 * what would this fan-out cost if each fork child were a fresh sub-agent instead?
 *
 * - What a fresh agent is given: the fork agent's fallback system prompt, the tool
 *   declarations and its directive: no parent history. Its first request is `F + D` tokens
 *   (F: system prompt + tools, the same for every agent of the fan-out; D: its directive).
 * - Which turns count: every successful request of every fork child, replaced by the fresh
 *   agent's request for the same turn. The fresh agent is assumed to make the same turns with
 *   the same outputs and tool results, so its request k is the fork's request k minus the
 *   shared prefix plus F + D: `fresh_k = (F + D) + (t_k − t_1)`. Everything else keeps its
 *   actual cost (the parent's turns, failed attempts, ordinary sub-agents); warm-ups are
 *   dropped (a fresh agent has no parent prefix to warm).
 * - How it caches: as forks do. The first agent writes F, the others read it (agents of one
 *   type send the same system prompt and tools), and each later request reads the one before
 *   (see `cachedTurns`); prices are the fork request's own (its date, band, TTL 5m writes).
 *
 * A fresh agent carries no parent history, so when the shared prefix is larger than F it costs
 * less per turn than a fork: the fork's worth is the context it starts with, which saves turns
 * the baseline does not model. Against this baseline a saving can be negative.
 */
export const FRESH_AGENTS_SENTENCE =
  "fresh agents: each fork replaced by an agent given only the fallback system prompt, the tools and its directive (no parent history), making the same turns, cached as forks are; negative savings mean the parent's history costs more than it saves in tokens";

/** One fork child as the baseline sees it. */
export interface ForkTurns {
  /** Total input tokens of each successful request, in turn order. */
  inputs: readonly number[];
  outputs: readonly number[];
  /** The fork's first request as a fresh agent: F + D. */
  freshFirst: number;
}

/**
 * The fresh agents' requests replacing the forks' (one list per fork, request for request).
 * `freshHead` is F, the part every fresh agent shares; the first fork's agent writes it.
 */
export function freshAgentUsages(forks: readonly ForkTurns[], freshHead: number, minCacheable: number): Usage[][] {
  return forks.map((fork, i) => {
    const first = fork.inputs[0] ?? 0;
    const totals = fork.inputs.map((t) => fork.freshFirst + Math.max(0, t - first));
    const shared = i > 0 && freshHead >= minCacheable ? Math.min(freshHead, fork.freshFirst) : 0;
    return cachedTurns(totals, shared, fork.outputs, minCacheable);
  });
}
