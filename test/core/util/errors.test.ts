import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  exitClassOf,
  ForkcacheError,
  fromWireError,
  hasCode,
  isForkcacheError,
  isReadableCode,
  toWireError,
} from '../../../src/core/util/errors.ts';

describe('ForkcacheError', () => {
  it('keeps code and data across structuredClone only through the wire form', () => {
    const err = new ForkcacheError('FORK_PREFIX_DRIFT', 'drifted at byte 12', { data: { prefixId: 'p', offset: 12 } });
    const cloned = structuredClone(err) as unknown as { code?: string };
    expect(cloned.code).toBeUndefined(); // why the wire form exists
    const rebuilt = fromWireError(structuredClone(toWireError(err)));
    expect(rebuilt).toBeInstanceOf(ForkcacheError);
    expect(rebuilt.code).toBe('FORK_PREFIX_DRIFT');
    expect(rebuilt.data).toEqual({ prefixId: 'p', offset: 12 });
    expect(hasCode(rebuilt, 'FORK_PREFIX_DRIFT')).toBe(true);
  });

  it('has undefined data when made without any, on both sides of the wire', () => {
    const err = new ForkcacheError('ENGINE_CLOSED', 'closed');
    expect(err.data).toBeUndefined();
    expect(err.toWire()).toEqual({ code: 'ENGINE_CLOSED', message: 'closed', data: {} });
    expect(fromWireError(structuredClone(err.toWire())).data).toBeUndefined();
    expect(Object.isFrozen(new ForkcacheError('INVALID_OPTION', 'x', { data: { field: 'x' } }).data)).toBe(true);
  });

  it('maps foreign errors to INTERNAL and keeps an unknown code as data', () => {
    expect(toWireError(new TypeError('boom'))).toEqual({ code: 'INTERNAL', message: 'boom' });
    expect(toWireError('text')).toEqual({ code: 'INTERNAL', message: 'text' });
    const rebuilt = fromWireError({ code: 'ECONNRESET', message: 'reset' });
    expect(rebuilt.code).toBe('INTERNAL');
    expect(rebuilt.data).toEqual({ originalCode: 'ECONNRESET' });
  });
});

describe('retired codes', () => {
  it('INVALID_ARGUMENT, split in 0.7.0, is still read from older files and hosts, with its old exit class', () => {
    expect((ERROR_CODES as readonly string[]).includes('INVALID_ARGUMENT')).toBe(false);
    expect(isReadableCode('INVALID_ARGUMENT')).toBe(true);
    expect(exitClassOf({ code: 'INVALID_ARGUMENT', message: 'from a 0.6 manifest' })).toBe('input');
    for (const code of ['INVALID_OPTION', 'INVALID_FLAG', 'INVALID_PLAN', 'INVALID_RUN_DIR'] as const)
      expect(exitClassOf(new ForkcacheError(code, 'x'))).toBe('input');
    expect(isReadableCode('GIT_MERGE_CONFLICT')).toBe(false);
    expect(isReadableCode('ECONNRESET')).toBe(false);
  });
});

describe('isForkcacheError', () => {
  it('recognises errors from another copy of the package, where instanceof fails', async () => {
    // The query makes a second instance of the module, as a second copy of the package would be.
    const second = '../../../src/core/util/errors.ts?copy=2';
    const copy = (await import(/* @vite-ignore */ second)) as typeof import('../../../src/core/util/errors.ts');
    const foreign = new copy.ForkcacheError('FORK_RECURSION', 'from the other copy', { data: { querySource: null } });
    expect(foreign).not.toBeInstanceOf(ForkcacheError);
    expect(isForkcacheError(foreign)).toBe(true);
    expect(copy.isForkcacheError(new ForkcacheError('INTERNAL', 'from this copy'))).toBe(true);
  });

  it('is false for look-alikes and for an error that lost its class crossing a thread', () => {
    expect(isForkcacheError(Object.assign(new Error('x'), { code: 'FORK_RECURSION', name: 'ForkcacheError' }))).toBe(
      false,
    );
    expect(isForkcacheError({ code: 'INTERNAL', message: 'x' })).toBe(false);
    expect(isForkcacheError(null)).toBe(false);
    expect(isForkcacheError('FORK_RECURSION')).toBe(false);
    const err = new ForkcacheError('FORK_PREFIX_DRIFT', 'drift', { data: { fork: 0 } });
    expect(isForkcacheError(structuredClone(err))).toBe(false);
    expect(isForkcacheError(fromWireError(toWireError(err)))).toBe(true);
  });
});

describe('every error src throws is a ForkcacheError', () => {
  it('no bare Error, TypeError or RangeError is made in src/ (a code names each failure)', () => {
    const root = new URL('../../../src/', import.meta.url);
    const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(100);
    const bare = files.flatMap((f) =>
      readFileSync(new URL(f, root), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bnew (Error|TypeError|RangeError)\(/.test(line) ? [`src/${f}:${i + 1}`] : [])),
    );
    expect(bare).toEqual([]);
  });
});

describe('every declared code is made somewhere in src', () => {
  it('each code of ERROR_CODES is written as a literal outside errors.ts, not only compared or commented', () => {
    const root = new URL('../../../src/', import.meta.url);
    const files = (readdirSync(root, { recursive: true }) as string[]).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('core/util/errors.ts'),
    );
    const lines = files.flatMap((f) =>
      readFileSync(new URL(f, root), 'utf8')
        .split('\n')
        .filter((line) => !/^\s*(\*|\/\/)/.test(line)),
    );
    // A code only compared (`err.code === 'X'`) or named in a comment is one nothing throws: a dead code.
    const made = (code: string) =>
      lines.some((line) => line.replaceAll(new RegExp(`[!=]==\\s*'${code}'`, 'g'), '').includes(`'${code}'`));
    expect(ERROR_CODES.filter((code) => !made(code))).toEqual([]);
  });
});
