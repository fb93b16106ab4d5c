import { createRequire } from 'node:module';
import { countInSegments } from './long-runs.ts';
import { ForkcacheError } from '../../../core/util/errors.ts';

/**
 * Counts the tokens of a text. The emulator's one seam for token arithmetic: pass your own to
 * `startEmulator({ tokenizer })` (a calibrated one, or a trivial one that makes test
 * expectations easy to write by hand).
 */
export interface Tokenizer {
  count(text: string): number;
  /** Shown in stats and docs. */
  readonly name?: string;
}

interface BpeEncoder {
  encode(text: string, allowedSpecial?: 'all'): Uint32Array;
}

let claudeEncoder: BpeEncoder | undefined;

// Loaded on first use, not at import: the vocabulary is ~1.7 MB of JSON and its WASM BPE takes
// ~150 ms to build, which users who pass their own tokenizer should not pay.
function encoder(): BpeEncoder {
  if (!claudeEncoder) {
    const require = createRequire(import.meta.url);
    const mod = require('@anthropic-ai/tokenizer') as { getTokenizer(): BpeEncoder };
    claudeEncoder = mod.getTokenizer();
  }
  return claudeEncoder;
}

/**
 * The default: Anthropic's published Claude BPE (`@anthropic-ai/tokenizer`, a 65k vocabulary
 * run by tiktoken's WASM encoder), with the package's own NFKC normalisation. It is the
 * vocabulary of older Claude models: current models tokenize somewhat differently, so counts
 * are an approximation (see the emulator README for how close). One shared encoder per process.
 * Linear in the text: a run longer than `MAX_PIECE` characters of one class is counted in
 * slices (see long-runs.ts), so no word, however long, stalls the process.
 */
export const claudeTokenizer: Tokenizer = {
  name: 'claude-bpe',
  count(text: string): number {
    if (text === '') return 0;
    const bpe = encoder();
    return countInSegments(text.normalize('NFKC'), (segment) => bpe.encode(segment, 'all'));
  },
};

/** A dependency-free estimate: one token per four characters, rounded up. */
export const approximateTokenizer: Tokenizer = {
  name: 'chars/4',
  count: (text: string) => Math.ceil(text.length / 4),
};

/**
 * Multiply another tokenizer's counts, e.g. to calibrate the default against `count_tokens`
 * figures of the real API for a given model family.
 *
 * @example scaledTokenizer(claudeTokenizer, 1.1)
 */
export function scaledTokenizer(base: Tokenizer, factor: number): Tokenizer {
  if (!(factor > 0) || !Number.isFinite(factor))
    throw new ForkcacheError('INVALID_OPTION', 'scaledTokenizer: factor must be a positive finite number', {
      data: { field: 'factor' },
    });
  return { name: `${base.name ?? 'custom'}×${factor}`, count: (text) => Math.round(base.count(text) * factor) };
}
