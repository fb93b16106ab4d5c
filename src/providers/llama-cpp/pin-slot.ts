import { ForkcacheError } from '../../core/util/errors.ts';

const CLOSE = 0x7d; // `}`
const encoder = new TextEncoder();

/**
 * The request's bytes with `"id_slot": slot` as the last field of its JSON object: after the
 * frozen head and the fork's own suffix, so the head stays the same bytes (the drift check
 * holds) and the slot is the one the permit named for this one request.
 */
export function pinToSlot(body: Uint8Array, slot: number): Uint8Array {
  if (!Number.isInteger(slot) || slot < 0)
    throw new ForkcacheError('INVALID_OPTION', `slot: expected a slot id (an integer ≥ 0), got ${slot}`, {
      data: { field: 'slot' },
    });
  let end = body.byteLength - 1;
  while (end >= 0 && (body[end] === 0x20 || body[end] === 0x0a || body[end] === 0x0d || body[end] === 0x09)) end--;
  if (end < 1 || body[end] !== CLOSE)
    throw new ForkcacheError('INVALID_OPTION', 'body: expected a JSON object to pin to a slot', {
      data: { field: 'body' },
    });
  const field = encoder.encode(`,"id_slot":${slot}}`);
  const out = new Uint8Array(end + field.byteLength);
  out.set(body.subarray(0, end), 0);
  out.set(field, end);
  return out;
}
