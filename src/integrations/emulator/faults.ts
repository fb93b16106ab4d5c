import { ForkcacheError } from '../../core/util/errors.ts';
import { invalidRequest } from './api-error.ts';
import { seededRandom } from './ids.ts';

/**
 * Faults the emulator can inject:
 * - `429` rate_limit_error (with `retry-after`), `529` overloaded_error, `500` api_error,
 *   `504` timeout_error: an error response instead of processing the request;
 * - `stream-error`: the response begins, then fails (`event: error` mid-stream; a non-streaming
 *   request gets a 500 after its time to first token, its cache writes already made);
 * - `reset`: the connection is destroyed without a response;
 * - `cut`: a 2xx response begins, then its connection drops part-way through the body (after
 *   the first delta of a stream; half-way through a non-streamed message's JSON). A streamed
 *   cut is billed as `stream-error` is (what `message_start` reported); a non-streamed one is
 *   billed whole: the message was complete when its bytes began to leave (the case the
 *   Anthropic SDK 1.17 resends, "a POST that already succeeded");
 * - `slow`: time to first token × `slowFactor` + `slowExtraMs` (see the latency profile).
 */
export const FAULT_KINDS = ['429', '529', '500', '504', 'stream-error', 'reset', 'cut', 'slow'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  kind: FaultKind;
  /** Chance per request, 0..1. The rules' chances add up to at most 1. */
  probability: number;
}

/** Header that forces a fault on one request (`none` forces none). */
export const FAULT_HEADER = 'x-forkcache-fault';

const isKind = (value: string): value is FaultKind => (FAULT_KINDS as readonly string[]).includes(value);

/** Check parsed rules: known kinds, chances in 0..1 adding up to at most 1. */
export function validateFaultRules(rules: readonly FaultRule[], source = 'faults'): FaultRule[] {
  let total = 0;
  for (const [i, rule] of rules.entries()) {
    if (!isKind(rule.kind)) {
      throw new ForkcacheError(
        'INVALID_OPTION',
        `${source}[${i}].kind: unknown fault "${rule.kind}" (known: ${FAULT_KINDS.join(', ')})`,
      );
    }
    if (!(rule.probability >= 0 && rule.probability <= 1)) {
      throw new ForkcacheError(
        'INVALID_OPTION',
        `${source}[${i}].probability: expected a number from 0 to 1, got ${rule.probability}`,
      );
    }
    total += rule.probability;
  }
  if (total > 1 + 1e-9)
    throw new ForkcacheError('INVALID_OPTION', `${source}: the chances add up to ${total}, more than 1`);
  return rules.map((r) => ({ ...r }));
}

/**
 * Parse `429:0.1,529:0.05,stream-error:0.05`: comma-separated `kind:probability` pairs.
 * An empty string means no faults.
 */
export function parseFaultSpec(spec: string): FaultRule[] {
  const rules: FaultRule[] = [];
  for (const [i, part] of spec
    .split(',')
    .map((p) => p.trim())
    .entries()) {
    if (part === '') continue;
    const match = /^([a-z0-9-]+):([0-9.]+)$/.exec(part);
    if (!match)
      throw new ForkcacheError(
        'INVALID_OPTION',
        `faults: "${part}" (item ${i + 1}) is not kind:probability, e.g. 429:0.1`,
      );
    rules.push({ kind: match[1] as FaultKind, probability: Number(match[2]) });
  }
  return validateFaultRules(rules);
}

/** Picks a fault per request: forced by header, else drawn from the seeded rules. */
export class FaultInjector {
  readonly #rules: FaultRule[];
  readonly #random: () => number;

  constructor(rules: readonly FaultRule[], seed: number) {
    this.#rules = validateFaultRules(rules);
    this.#random = seededRandom(seed ^ 0x5eed);
  }

  get rules(): readonly FaultRule[] {
    return this.#rules;
  }

  /** The fault for one request; `forced` is the header's value, if any. */
  pick(forced: string | undefined): FaultKind | undefined {
    if (forced !== undefined) {
      const value = forced.trim().toLowerCase();
      if (value === 'none' || value === '') return undefined;
      if (!isKind(value))
        throw invalidRequest(`${FAULT_HEADER}: unknown fault "${forced}" (known: none, ${FAULT_KINDS.join(', ')})`);
      return value;
    }
    if (this.#rules.length === 0) return undefined;
    let u = this.#random();
    for (const rule of this.#rules) {
      if (u < rule.probability) return rule.kind;
      u -= rule.probability;
    }
    return undefined;
  }
}
