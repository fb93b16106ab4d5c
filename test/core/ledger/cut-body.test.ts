import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APIConnectionError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { UsageLedger } from '../../../src/core/ledger/ledger.ts';
import { createAnthropicClient } from '../../../src/providers/anthropic/client.ts';
import { billedUnreadOf, sendMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { bigSnapshot, workspace } from '../engine/helpers.ts';

// Issue 44: from 1.17 the Anthropic SDK sends a request again when its connection drops in the
// middle of the response body, within `maxRetries`, although that 2xx may already be billed.
// forkcache's SDK never resends a request that may be billed; the loop resends it, and each
// attempt the emulator billed is in the ledger, request by request.

interface LoggedExchange {
  request: { method: string; url: string };
  billed?: { messageId: string; usage: Tokens } | null;
}

const exchanges = (dir: string): LoggedExchange[] =>
  readdirSync(dir)
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as LoggedExchange)
    .filter((e) => e.request.method === 'POST' && e.request.url.split('?')[0] === '/v1/messages');

interface Tokens {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  output_tokens: number;
}

const tokens = (u: Tokens) => ({
  input: u.input_tokens,
  read: u.cache_read_input_tokens,
  write: u.cache_creation_input_tokens,
  output: u.output_tokens,
});

describe('a response body cut mid-way (the `cut` fault)', () => {
  it('is resent by the loop, and the ledger equals what the emulator billed, request by request', async () => {
    const seen = new Map<string, number>();
    const logDir = workspace({});
    const emulator = await startEmulator({
      latency: 'off',
      script: 'refactor',
      logDir,
      // the first attempt of every request body is cut after its first delta; some twice
      faultFor: (body) => {
        const key = createHash('sha256').update(JSON.stringify(body)).digest('hex');
        const n = seen.get(key) ?? 0;
        seen.set(key, n + 1);
        return n < (seen.size % 2 === 0 ? 2 : 1) ? 'cut' : 'none';
      },
    });
    const files = Object.fromEntries(
      Array.from({ length: 4 }, (_, i) => [`m${i}.ts`, `export const fetchData = ${i};\n`]),
    );
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      // the SDK's retries asked for: still none on a fork's request
      maxRetries: 3,
      workspace: workspace(files),
      runDir: workspace({}),
      turnRetry: { baseMs: 0, retries: 4 },
      pool: { maxThreads: 2 },
    });
    try {
      const result = await engine
        .fanOut(
          bigSnapshot(`cut-${Date.now()}`),
          Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
        )
        .settled();
      const { forks, summary } = result;
      expect(forks.map((f) => f.status)).toEqual(forks.map(() => 'completed'));
      const cuts = emulator.stats().requests.faults['cut'] ?? 0;
      const failed = forks.flatMap((f) => f.failedAttempts ?? []);
      expect(cuts).toBeGreaterThan(forks.length); // every fork's first request, and some twice
      expect(failed).toHaveLength(cuts); // each cut attempt is in the ledger, none resent unseen

      await engine.close(); // every connection closed: each exchange's file is written
      const logged = exchanges(logDir);
      const billed = new Map(
        logged.flatMap((e) => (e.billed ? [[e.billed.messageId, tokens(e.billed.usage)] as const] : [])),
      );
      const ledger = new Map(
        forks.flatMap((f) => [...f.requests, ...(f.failedAttempts ?? [])]).map((r) => [r.messageId, tokens(r.usage)]),
      );
      // request by request: the same messages, with the same usage
      expect(Object.fromEntries(ledger)).toEqual(Object.fromEntries(billed));
      // every POST the emulator answered with a message was billed: turns plus resends
      const turns = forks.reduce((n, f) => n + f.requests.length, 0);
      expect(logged.filter((e) => e.billed)).toHaveLength(turns + cuts);
      const stats = emulator.stats();
      expect({
        input: summary.usage.input_tokens,
        read: summary.usage.cache_read_input_tokens,
        write: summary.usage.cache_creation_input_tokens,
        output: summary.usage.output_tokens,
      }).toEqual({
        input: stats.tokens.uncached,
        read: stats.tokens.cacheRead,
        write: stats.tokens.cacheWrite,
        output: stats.tokens.output,
      });
    } finally {
      await engine.close();
      await emulator.close();
    }
  });

  it('a non-streamed body cut mid-way is not sent again by the SDK, whatever its maxRetries', async () => {
    const emulator = await startEmulator({ latency: 'off', faults: 'cut:1' });
    try {
      const client = createAnthropicClient({ baseURL: emulator.url, apiKey: 'test', maxRetries: 3 });
      const body = new TextEncoder().encode(
        JSON.stringify({
          model: 'claude-sonnet-4-6',
          max_tokens: 16,
          messages: [{ role: 'user', content: 'hello' }],
        }),
      );
      const err = await sendMessageBytes(client, body).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIConnectionError);
      // told apart from a request that got no answer: its 2xx began, so it was billed
      expect(billedUnreadOf(err)).toBeDefined();
      const nobody = createAnthropicClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'test', maxRetries: 0 });
      const refused = await sendMessageBytes(nobody, body).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(APIConnectionError);
      expect(billedUnreadOf(refused)).toBeUndefined();
      const stats = emulator.stats();
      expect(stats.requests.faults['cut']).toBe(1);
      // billed once (the message was complete when its bytes began to leave), sent once
      expect(stats.requests.messages).toBe(1);
      expect(stats.requests.total).toBe(1);
    } finally {
      await emulator.close();
    }
  });

  it('a pre-warm whose body is cut is billed, and the ledger holds it as a failed warm-up: ledger = billed', async () => {
    const logDir = workspace({});
    let prewarms = 0;
    const emulator = await startEmulator({
      latency: 'off',
      script: 'refactor',
      logDir,
      // the pre-warm (`max_tokens: 0`, not streamed) is cut once; the first child then warms
      faultFor: (body) => ((body as { max_tokens?: number }).max_tokens === 0 && prewarms++ === 0 ? 'cut' : 'none'),
    });
    const files = { 'a.ts': 'export const fetchData = 1;\n', 'b.ts': 'export const fetchData = 2;\n' };
    const engine = await ForkEngine.create({
      baseURL: emulator.url,
      apiKey: 'test',
      warm: 'prewarm',
      workspace: workspace(files),
      pool: { maxThreads: 2 },
    });
    const ledger = new UsageLedger();
    try {
      const { forks, summary } = await engine
        .fanOut(
          bigSnapshot(`cut-prewarm-${Date.now()}`),
          Object.keys(files).map((f) => `rename fetchData to loadData in ${f}`),
          { ledger },
        )
        .settled();
      expect(forks.map((f) => f.status)).toEqual(['completed', 'completed']);
      expect(emulator.stats().requests.faults['cut']).toBe(1);
      const warmups = ledger.records().filter((r) => r.kind === 'warmup');
      // the cut pre-warm, recorded as a failed attempt: it wrote the shared prefix and generated nothing
      expect(warmups).toHaveLength(1);
      expect(warmups[0]!.attempt).toBe('failed');
      expect(warmups[0]!.usage.output_tokens).toBe(0);
      expect(warmups[0]!.usage.cache_creation_input_tokens).toBe(summary.prefix.shared_tokens);
      // the first child wrote nothing again: it read what the cut pre-warm wrote
      expect(summary.cache.cache_efficiency).toBe(1);

      await engine.close();
      const billed = exchanges(logDir).filter((e) => e.billed);
      // every billed POST is in the ledger: the cut pre-warm and every fork's turns
      expect(ledger.records()).toHaveLength(billed.length);
      const stats = emulator.stats();
      const usage = ledger.summary().usage;
      expect({
        input: usage.input_tokens,
        read: usage.cache_read_input_tokens,
        write: usage.cache_creation_input_tokens,
        output: usage.output_tokens,
      }).toEqual({
        input: stats.tokens.uncached,
        read: stats.tokens.cacheRead,
        write: stats.tokens.cacheWrite,
        output: stats.tokens.output,
      });
    } finally {
      await engine.close();
      await emulator.close();
    }
  });
});
