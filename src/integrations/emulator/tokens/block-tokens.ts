import type { Tokenizer } from './tokenizer.ts';

/** Token costs that a text tokenizer cannot see. Defaults documented in the emulator README. */
export interface TokenCosts {
  /**
   * The API's hidden tool-use system prompt, counted once when `tools` is non-empty (Anthropic
   * documents 346 tokens for Claude 4 models with tool_choice auto/none). It sits at the start
   * of the prefix, so the emulator adds it to the first tool's position.
   */
  toolPromptTokens: number;
  /** An image block (the API charges ~width×height/750; 1600 is a ~1.15 megapixel image). */
  imageTokens: number;
}

export const DEFAULT_TOKEN_COSTS: TokenCosts = { toolPromptTokens: 346, imageTokens: 1600 };

/** Most block counts kept; beyond it the oldest are forgotten (a bounded memo, not a cache of the API). */
const MEMO_LIMIT = 50_000;

type Counted = { text: string } | { fixed: number };

function nestedText(content: unknown, costs: TokenCosts): Counted[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) => countable(block as Record<string, unknown>, costs, undefined));
}

function base64Bytes(data: unknown): number {
  return typeof data === 'string' ? Math.floor((data.length * 3) / 4) : 0;
}

// What of a block reaches the model as tokens. `json` is the block's own rendering, used where
// the structure itself is what the model reads (tool definitions, unknown block types).
function countable(block: Record<string, unknown>, costs: TokenCosts, json: string | undefined): Counted[] {
  switch (block['type']) {
    case 'text':
      return [{ text: String(block['text'] ?? '') }];
    case 'thinking':
      return [{ text: String(block['thinking'] ?? '') }];
    case 'redacted_thinking':
      return [{ fixed: Math.ceil(String(block['data'] ?? '').length / 4) }];
    case 'tool_use':
      return [{ text: `${String(block['name'])} ${JSON.stringify(block['input'] ?? {})}` }];
    case 'tool_result':
      return nestedText(block['content'], costs);
    case 'image':
      return [{ fixed: costs.imageTokens }];
    case 'search_result':
      return [{ text: String(block['title'] ?? '') }, ...nestedText(block['content'], costs)];
    case 'document': {
      const source = (block['source'] ?? {}) as Record<string, unknown>;
      if (source['type'] === 'text') return [{ text: String(source['data'] ?? '') }];
      if (source['type'] === 'content') return nestedText(source['content'], costs);
      // A PDF's tokens depend on its pages; a quarter of its bytes is a rough stand-in.
      return [{ fixed: Math.ceil(base64Bytes(source['data']) / 4) }];
    }
    default:
      return [{ text: json ?? JSON.stringify(block) }];
  }
}

/**
 * Counts blocks, memoized by the block's digest: a prefix seen before is never re-tokenized,
 * only re-hashed (hashing is ~100× cheaper than BPE).
 */
export class BlockTokenCounter {
  readonly #tokenizer: Tokenizer;
  readonly #costs: TokenCosts;
  readonly #memo = new Map<string, number>();
  #tokenized = 0;

  constructor(tokenizer: Tokenizer, costs: TokenCosts = DEFAULT_TOKEN_COSTS) {
    this.#tokenizer = tokenizer;
    this.#costs = costs;
  }

  get costs(): TokenCosts {
    return this.#costs;
  }

  /** How many blocks were actually tokenized (memo misses), for tests and stats. */
  get tokenizedBlocks(): number {
    return this.#tokenized;
  }

  /** A block's count if it is memoized: a caller can then skip rendering its JSON. */
  known(digest: string): number | undefined {
    return this.#memo.get(digest);
  }

  /**
   * Tokens of one block. `digest` identifies its content (sha256 of `json`); `json` is its
   * rendering without cache_control; `asTool` counts a tool definition (its JSON is what the
   * model reads).
   */
  block(digest: string, block: Record<string, unknown>, json: string, asTool = false): number {
    const known = this.#memo.get(digest);
    if (known !== undefined) return known;
    this.#tokenized++;
    const parts: Counted[] = asTool ? [{ text: json }] : countable(block, this.#costs, json);
    let total = 0;
    for (const part of parts) total += 'fixed' in part ? part.fixed : this.#tokenizer.count(part.text);
    if (this.#memo.size >= MEMO_LIMIT) this.#memo.delete(this.#memo.keys().next().value!);
    this.#memo.set(digest, total);
    return total;
  }

  /** Tokens of a plain text (outputs), not memoized. */
  text(text: string): number {
    return this.#tokenizer.count(text);
  }
}
