import { describe, expect, it } from 'vitest';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import {
  SAB_HEADER_BYTES,
  SAB_OFFSET_FLAGS,
  SAB_OFFSET_LENGTH,
  SAB_OFFSET_MAGIC,
  attachCount,
  attachFrozenPrefix,
  readFrozenHeader,
} from '../../../src/core/prefix/sab.ts';
import { fixture } from '../../helpers.ts';

const fresh = (system = 'sab test') =>
  freeze(
    captureSnapshot({
      ...fixture<Record<string, unknown>>('parent-request.json'),
      system: `${system} ${Math.random()}`,
    }),
  );

describe('frozen prefix SharedArrayBuffer', () => {
  it('carries a header with magic, version, length, hash and the head bytes', () => {
    const prefix = fresh();
    const header = readFrozenHeader(prefix.sab);
    expect(header).toEqual({ sha256: prefix.sha256, byteLength: prefix.byteLength, headEnd: 'content-open' });
    expect(prefix.sab.byteLength).toBe(SAB_HEADER_BYTES + prefix.byteLength);
    expect(prefix.head.buffer).toBe(prefix.sab);
  });

  it('attaches with the hash verified once per thread, and exposes the same bytes', () => {
    const prefix = fresh();
    const a = attachFrozenPrefix(prefix.sab);
    const b = attachFrozenPrefix(prefix.sab);
    expect(b).toBe(a);
    expect(attachCount(prefix.sab)).toBe(1);
    expect(Buffer.from(a.head).equals(Buffer.from(prefix.head))).toBe(true);
    attachFrozenPrefix(prefix.sab, { verify: 'always' });
    expect(attachCount(prefix.sab)).toBe(2);
  });

  it('a buffer of the same head with another head end is read again, not taken from the thread’s cache', () => {
    // a thread serves engine after engine (src/core/pool/thread-pool.ts): only an identical header is the same prefix
    const prefix = fresh();
    expect(attachFrozenPrefix(prefix.sab).headEnd).toBe('content-open');
    const other = new SharedArrayBuffer(prefix.sab.byteLength);
    new Uint8Array(other).set(new Uint8Array(prefix.sab));
    new DataView(other).setUint16(SAB_OFFSET_FLAGS, 0, true);
    const before = attachCount(other); // the copy's counter came with it
    const attached = attachFrozenPrefix(other);
    expect(attached.headEnd).toBe('messages-open');
    expect(attached.sha256).toBe(prefix.sha256);
    expect(attachCount(other)).toBe(before + 1); // hashed, not taken from the cache
  });

  it('detects a flipped byte in the head', () => {
    const prefix = fresh();
    new Uint8Array(prefix.sab)[SAB_HEADER_BYTES + 10]! ^= 1;
    expect(() => attachFrozenPrefix(prefix.sab)).toThrow(
      expect.objectContaining({ code: 'FORK_PREFIX_CORRUPT', message: expect.stringMatching(/sha256/) }),
    );
  });

  it('detects a bad magic, a bad length and a non-shared buffer', () => {
    const badMagic = fresh();
    new DataView(badMagic.sab).setUint32(SAB_OFFSET_MAGIC, 0xdeadbeef, true);
    expect(() => attachFrozenPrefix(badMagic.sab)).toThrow(/bad magic/);
    const badLength = fresh();
    new DataView(badLength.sab).setUint32(SAB_OFFSET_LENGTH, 3, true);
    expect(() => attachFrozenPrefix(badLength.sab)).toThrow(/length 3 does not match/);
    expect(() => attachFrozenPrefix(new ArrayBuffer(64) as unknown as SharedArrayBuffer)).toThrow(
      /expected a SharedArrayBuffer/,
    );
    expect(() => attachFrozenPrefix(new SharedArrayBuffer(8))).toThrow(/shorter than the header/);
  });
});
