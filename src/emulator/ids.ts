import { createHash } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` base62 characters derived from `material` (sha256; deterministic). */
export function base62Digest(material: string, length = 22): string {
  let out = '';
  let round = 0;
  while (out.length < length) {
    const bytes = createHash('sha256').update(`${round++}:${material}`).digest();
    for (const byte of bytes) {
      if (out.length === length) break;
      out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A small seeded PRNG (mulberry32): uniform floats in [0, 1), the same sequence per seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Ids in the API's shapes. Message and request ids come from the seed and a counter, so a run
 * with the same seed and the same request order gives the same ids. Tool-use ids come from the
 * prompt itself (`toolUseId`), so replaying a conversation gives byte-identical ids whatever
 * else the emulator did in between.
 */
export class IdSource {
  readonly #seed: number;
  #counter = 0;

  constructor(seed: number) {
    this.#seed = seed;
  }

  /** `msg_01…` or `req_011C…`: one per call, never repeated in this emulator. */
  next(kind: 'msg' | 'req'): string {
    const n = this.#counter++;
    const body = base62Digest(`${kind}:${this.#seed}:${n}`, kind === 'msg' ? 22 : 20);
    return kind === 'msg' ? `msg_01${body}` : `req_011C${body}`;
  }
}

/** The id of the `index`-th tool_use of the turn that answers the prompt hashed as `promptHash`. */
export function toolUseId(promptHash: string, index: number): string {
  return `toolu_01${base62Digest(`tool_use:${promptHash}:${index}`, 22)}`;
}
