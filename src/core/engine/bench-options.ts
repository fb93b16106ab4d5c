import { z } from 'zod';
import { MARKER_STRATEGIES, type MarkerStrategy } from '../prefix/freeze.ts';
import { parseOrThrow } from '../util/validation.ts';

/**
 * How the slots get the prefix: `auto` (prefill once, then the KV cache copied into every slot
 * where the server keeps idle slots and allows copies; one slot where it clears them), `copy`
 * (prefill once and copy, even on a server that clears idle slots: there before each request on
 * a slot that lost it), `warm-each` (one prefill per slot: what `auto` falls back to without
 * copies, here on purpose).
 */
export type SlotFill = 'auto' | 'copy' | 'warm-each';
const SLOT_FILLS: readonly SlotFill[] = ['auto', 'copy', 'warm-each'];

/**
 * Engine settings that exist to compare forkcache with what it replaces (bench/, and tests of
 * the llama.cpp slot fills): where the cache markers go (`last-only` as peers do, `none`: no
 * caching) and how llama.cpp slots get the shared prefix. Not options of the public API: a user
 * never wants a fan-out that caches worse. Like the test hooks they travel under a symbol key no
 * public module exports, so only code that imports this file can set them.
 */
export interface BenchOptions {
  /** Cache markers (default `boundary`). */
  markers?: MarkerStrategy | undefined;
  /**
   * `llama-cpp` only: `auto` (default) prefills once, then copies that slot's KV cache into the
   * others (needs the server's `--slot-save-path`), else one prefill per slot; on a server that
   * clears idle slots one slot serves every fork in turn. `copy`: copies even there, before each
   * fork's request; `warm-each`: one prefill per slot.
   */
  slotFill?: SlotFill | undefined;
}

const BENCH_OPTIONS = Symbol('forkcache.benchOptions');

const benchOptionsSchema = z.strictObject({
  markers: z.enum(MARKER_STRATEGIES as [MarkerStrategy, ...MarkerStrategy[]]).optional(),
  slotFill: z.enum(SLOT_FILLS as [SlotFill, ...SlotFill[]]).optional(),
});

/** Engine options carrying bench options (for `ForkEngine.create`). */
export function withBenchOptions<T extends object>(options: T, bench: BenchOptions): T {
  return { ...options, [BENCH_OPTIONS]: bench } as T;
}

/** The validated bench options of engine options (`{}` without any). */
export function benchOptionsOf(options: object): BenchOptions {
  const bench = (options as { [BENCH_OPTIONS]?: unknown })[BENCH_OPTIONS];
  return bench === undefined
    ? {}
    : (parseOrThrow(benchOptionsSchema, bench, 'INVALID_OPTION', 'bench options') as BenchOptions);
}
