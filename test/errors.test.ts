import { describe, expect, it } from 'vitest';
import { ForkcacheError, fromWireError, hasCode, toWireError } from '../src/errors.ts';

describe('ForkcacheError', () => {
  it('keeps code and data across structuredClone only through the wire form', () => {
    const err = new ForkcacheError('FORK_PREFIX_DRIFT', 'drifted at byte 12', { data: { offset: 12 } });
    const cloned = structuredClone(err) as unknown as { code?: string };
    expect(cloned.code).toBeUndefined(); // why the wire form exists
    const rebuilt = fromWireError(structuredClone(toWireError(err)));
    expect(rebuilt).toBeInstanceOf(ForkcacheError);
    expect(rebuilt.code).toBe('FORK_PREFIX_DRIFT');
    expect(rebuilt.data).toEqual({ offset: 12 });
    expect(hasCode(rebuilt, 'FORK_PREFIX_DRIFT')).toBe(true);
  });

  it('maps foreign errors to INTERNAL and keeps an unknown code as data', () => {
    expect(toWireError(new TypeError('boom'))).toEqual({ code: 'INTERNAL', message: 'boom' });
    expect(toWireError('text')).toEqual({ code: 'INTERNAL', message: 'text' });
    const rebuilt = fromWireError({ code: 'ECONNRESET', message: 'reset' });
    expect(rebuilt.code).toBe('INTERNAL');
    expect(rebuilt.data).toEqual({ originalCode: 'ECONNRESET' });
  });
});
