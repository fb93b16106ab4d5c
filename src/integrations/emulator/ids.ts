import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` base62 characters derived from `material` (sha256; deterministic). */
function base62Digest(material: string, length = 22): string {
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
 * Ids in the API's shapes. Message and request ids come from a salt and a counter: with a seed
 * the salt is the seed, so a run with the same seed and request order gives the same ids;
 * without one it is random, so ids never repeat across restarts (clients persist message ids
 * and send them back in `diagnostics.previous_message_id`). Tool-use ids come from the prompt
 * itself (`toolUseId`), so replaying a conversation gives byte-identical ids either way.
 */
export class IdSource {
  readonly #seed: string;
  #counter = 0;

  constructor(seed: number | undefined) {
    this.#seed = seed === undefined ? `random:${randomBytes(16).toString('hex')}` : String(seed);
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
