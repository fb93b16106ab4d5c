import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_AFTER, retryWaitMs } from '../../../src/core/gate/admission/retry-wait.ts';
import { parseRetryAfterMs } from '../../../src/core/rate-limits/headers.ts';
import { RETRY_AFTER_MAX_MS } from '../../../src/core/rate-limits/retry-after.ts';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const read = (value: string, name = 'retry-after') => parseRetryAfterMs({ [name]: value }, NOW);
const noJitter = { ...DEFAULT_RETRY_AFTER, jitter: 0 };

describe('retry-after: read within bounds, mapped to a documented backoff', () => {
  it('reads plain numbers of seconds (and retry-after-ms), an HTTP-date, and nothing else', () => {
    expect(read('3')).toBe(3_000);
    expect(read(' 2.5 ')).toBe(2_500);
    expect(read('1500', 'retry-after-ms')).toBe(1_500);
    expect(read('Tue, 01 Dec 2026 12:00:30 GMT')).toBe(30_000);
    for (const garbage of ['abc', '', ' ', 'Infinity', 'NaN', '0x10', 'soon', '3 seconds'])
      expect(read(garbage), garbage).toBeUndefined();
    expect(read('1')).toBe(1_000); // a bare number is seconds, never `Date.parse('1')` (the year 2001)
    expect(parseRetryAfterMs({}, NOW)).toBeUndefined();
  });

  it('negative and zero read as 0; huge ones (1e12, 1e400, a date in 2099) as at most an hour: no timer overflow', () => {
    expect(read('0')).toBe(0);
    expect(read('-5')).toBe(0);
    expect(read('Tue, 01 Dec 2020 12:00:00 GMT')).toBe(0); // in the past
    for (const huge of ['1e12', '1e400', 'Wed, 01 Jan 2099 00:00:00 GMT', '99999999999'])
      expect(read(huge), huge).toBe(RETRY_AFTER_MAX_MS);
    expect(RETRY_AFTER_MAX_MS).toBeLessThan(2 ** 31 - 1); // what setTimeout can hold
  });

  it('the wait: the floor for 0 and negatives, the ceiling for huge values, the value in between', () => {
    expect(retryWaitMs(read('0'), 1, noJitter)).toBe(1_000);
    expect(retryWaitMs(read('-5'), 1, noJitter)).toBe(1_000);
    expect(retryWaitMs(read('7'), 1, noJitter)).toBe(7_000);
    expect(retryWaitMs(read('1e12'), 1, noJitter)).toBe(60_000);
    expect(retryWaitMs(read('Wed, 01 Jan 2099 00:00:00 GMT'), 1, noJitter)).toBe(60_000);
  });

  it('unreadable or absent: the floor doubling per consecutive failure, up to the ceiling', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8, 40].map((n) => retryWaitMs(read('abc'), n, noJitter));
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });

  it('jitter only ever adds, at most 20% by default', () => {
    expect(retryWaitMs(5_000, 1, DEFAULT_RETRY_AFTER, () => 0)).toBe(5_000);
    expect(retryWaitMs(5_000, 1, DEFAULT_RETRY_AFTER, () => 0.5)).toBe(5_500);
    expect(retryWaitMs(5_000, 1, DEFAULT_RETRY_AFTER, () => 1)).toBe(6_000);
    expect(retryWaitMs(1e15, 1, DEFAULT_RETRY_AFTER, () => 1)).toBe(72_000);
  });
});
