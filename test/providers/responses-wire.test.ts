import { describe, expect, it } from 'vitest';
import { expectedFanOutMs, responsesTtlFor } from '../../src/core/engine/fan-out/responses-ttl.ts';
import { fromResponsesUsage } from '../../src/core/ledger/responses-usage.ts';
import { resolveEngineOptions } from '../../src/core/engine/options.ts';
import { freeze } from '../../src/core/prefix/freeze.ts';
import { prewarmBody, responsesRequestBody } from '../../src/providers/openai/responses.ts';
import { bigSnapshot } from '../core/engine/helpers.ts';

/* The Responses wire's pieces without a server: the frozen head, the prewarm body, the TTL choice, the usage mapping. */

const decode = (bytes: Uint8Array): Record<string, any> => JSON.parse(new TextDecoder().decode(bytes));

describe('the Responses head', () => {
  const prefix = freeze(bigSnapshot('wire:'), { provider: 'openai', responses: { ttl: '12h' } });

  it('carries the cache options, breakpoints on the system prompt and the shared boundary, and is every child’s first bytes', () => {
    const head = new TextDecoder().decode(prefix.head);
    expect(head.startsWith('{"model":')).toBe(true);
    expect(head).toContain('"prompt_cache_options":{"mode":"implicit","ttl":"12h"}');
    expect(head.match(/"prompt_cache_breakpoint":\{"mode":"explicit"\}/g)).toHaveLength(2);
    const bodies = ['one', 'two'].map((d) =>
      responsesRequestBody(prefix, prefix.child(d), { max_tokens: 100, stream: true }, 'key-1'),
    );
    for (const body of bodies)
      expect(Buffer.from(body.subarray(0, prefix.byteLength)).equals(Buffer.from(prefix.head))).toBe(true);
    const parsed = decode(bodies[0]!);
    expect(parsed.max_output_tokens).toBe(100);
    expect(parsed.stream).toBe(true);
    expect(parsed.prompt_cache_key).toBe('key-1');
    expect(parsed.input.at(-1).role).toBe('user');
  });

  it('the prewarm differs from the head only in its options: prewarm on, the input closed at the boundary', () => {
    const body = decode(prewarmBody(prefix, 'key-1'));
    expect(body.prompt_cache_options).toEqual({ mode: 'implicit', ttl: '12h', prewarm: true });
    const child = decode(responsesRequestBody(prefix, prefix.child('x'), { max_tokens: 10 }, 'key-1'));
    expect(body.input.length).toBeLessThanOrEqual(child.input.length);
    expect(body.tools).toEqual(child.tools);
    expect(body.max_output_tokens).toBeUndefined();
  });

  it('markers: none is the explicit mode with no breakpoint (nothing cached)', () => {
    const none = freeze(bigSnapshot('wire:'), { provider: 'openai', markers: 'none', responses: { ttl: '30m' } });
    const head = new TextDecoder().decode(none.head);
    expect(head).toContain('"prompt_cache_options":{"mode":"explicit","ttl":"30m"}');
    expect(head).not.toContain('prompt_cache_breakpoint');
  });

  it('is OpenAI’s only: another provider is refused, naming the option', () => {
    expect(() => freeze(bigSnapshot('wire:'), { provider: 'deepseek', responses: { ttl: '30m' } })).toThrow(
      /openaiWire/,
    );
  });
});

describe('the TTL of a fan-out’s writes', () => {
  const base = { concurrency: 16, maxThreads: 4, concurrentTasksPerWorker: 8, maxTurns: 200 };

  it('auto: 30 minutes for a fan-out of one wave, 12 hours once it is expected to outlive 30 minutes', () => {
    expect(expectedFanOutMs(base, 16)).toBe(20 * 15_000);
    expect(responsesTtlFor({ ...base, responsesTtl: 'auto' }, 16)).toBe('30m');
    // 7 waves of 16 at 20 turns of 15 s: 35 minutes
    expect(responsesTtlFor({ ...base, responsesTtl: 'auto' }, 100)).toBe('12h');
    expect(responsesTtlFor({ ...base, responsesTtl: 'auto', maxTurns: 2 }, 100)).toBe('30m');
  });

  it('an explicit choice is kept', () => {
    expect(responsesTtlFor({ ...base, responsesTtl: '12h' }, 1)).toBe('12h');
    expect(responsesTtlFor({ ...base, responsesTtl: '30m' }, 10_000)).toBe('30m');
  });
});

describe('Responses usage in the ledger', () => {
  it('reads, writes by TTL, and the uncached rest', () => {
    expect(
      fromResponsesUsage({
        input_tokens: 1_000,
        output_tokens: 5,
        input_tokens_details: {
          cached_tokens: 600,
          cache_write_tokens: 300,
          cache_write_tokens_details: { ttl_30m_tokens: 100, ttl_12h_tokens: 200 },
        },
      }),
    ).toEqual({
      input_tokens: 100,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 600,
      output_tokens: 5,
      cache_creation: {
        ephemeral_5m_input_tokens: 0,
        ephemeral_1h_input_tokens: 0,
        ttl_30m_input_tokens: 100,
        ttl_12h_input_tokens: 200,
      },
    });
  });

  it('a write total without its breakdown counts as 30-minute writes; no writes, no split', () => {
    const split = fromResponsesUsage({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 10 },
    });
    expect(split.cache_creation?.ttl_30m_input_tokens).toBe(10);
    expect(fromResponsesUsage({ input_tokens: 10, output_tokens: 1 }).cache_creation).toBeUndefined();
  });
});

describe('the engine option', () => {
  it('openaiWire: responses sets the wire of OpenAI’s endpoint, and is refused for another provider', () => {
    const resolved = resolveEngineOptions({
      provider: 'openai',
      openaiWire: 'responses',
      baseURL: 'http://127.0.0.1:9/v1',
    });
    expect(resolved.api.wire).toBe('responses');
    expect(resolved.responsesTtl).toBe('auto');
    expect(resolveEngineOptions({ provider: 'openai', baseURL: 'http://127.0.0.1:9/v1' }).api.wire).toBeUndefined();
    expect(() =>
      resolveEngineOptions({ provider: 'dashscope', openaiWire: 'responses', baseURL: 'http://127.0.0.1:9/v1' }),
    ).toThrow(/openaiWire/);
  });
});
