import { describe, expect, it } from 'vitest';
import type { EmulatorEvent } from '../../../src/integrations/emulator/server/core.ts';
import { childParams, complete, emulator, proxy, sdk, words } from './helpers.ts';

describe('proxy ledger on a fan-out (real SDK → proxy → emulator)', () => {
  it("records each request's read/write exactly as the emulator billed it, and groups the siblings", async () => {
    const emu = await emulator();
    const billed = new Map<string, EmulatorEvent['usage']>();
    emu.on('request-start', (e) => billed.set(e.messageId!, e.usage));
    const px = await proxy({ upstream: emu.url });
    const client = sdk(px.url);
    const shared = words(3000, 'shared');
    // A first child alone (it writes the shared prefix), then siblings together, streaming and not.
    await client.messages.create(childParams(shared, 'directive 0', false));
    await Promise.all(
      [1, 2, 3, 4].map(async (i) => {
        return complete(client, childParams(shared, `directive ${i}`, i % 2 === 1));
      }),
    );
    const records = px.ledger.records();
    expect(records).toHaveLength(5);
    for (const r of records) {
      const usage = billed.get(r.messageId!);
      expect(usage, `record #${r.seq}`).toBeDefined();
      expect(r.usage!.cache_read_input_tokens).toBe(usage!.cache_read_input_tokens);
      expect(r.usage!.cache_creation_input_tokens).toBe(usage!.cache_creation_input_tokens);
      expect(r.usage!.input_tokens).toBe(usage!.input_tokens);
      expect(r.status).toBe(200);
      expect(r.costUsd).toBeGreaterThan(0);
    }
    expect(records.slice(1).every((r) => r.usage!.cache_read_input_tokens > 3000)).toBe(true);
    const [fanout, ...others] = px.summary().fanouts;
    expect(others).toHaveLength(0);
    expect(fanout!.requests).toBe(5);
    expect(new Set(records.map((r) => r.fanout))).toEqual(new Set([fanout!.id]));
    // The shared prefix, estimated with the emulator's own tokenizer, is what the siblings read.
    expect(fanout!.cache_efficiency).toBe(1);
    expect(records.slice(1).every((r) => r.diagnosis?.reason === 'read')).toBe(true);
    expect(records[0]!.diagnosis?.reason).toBe('new_prefix');
  });
});
