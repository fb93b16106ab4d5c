import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/util/clock.ts';
import { commitWrites } from '../../../src/integrations/emulator/cache/plan.ts';
import { resolveOptions } from '../../../src/integrations/emulator/options.ts';
import { checkMessagesRequest } from '../../../src/integrations/emulator/request/schema.ts';
import { createCore, type EmulatorCore } from '../../../src/integrations/emulator/server/core.ts';
import type { Exchange } from '../../../src/integrations/emulator/server/exchange-log.ts';
import {
  billedUsage,
  lookUpCache,
  requireApiModel,
  type RequestContext,
} from '../../../src/integrations/emulator/server/messages.ts';
import type { ResponseUsage } from '../../../src/integrations/emulator/types.ts';
import { MODEL, wordTokenizer, words } from './helpers.ts';

/*
 * Two steps of `POST /v1/messages` on their own (the whole handler runs through HTTP in the
 * other emulator tests): the cache step, and what the endpoint bills as a response ends.
 */

function core(): { core: EmulatorCore; clock: ManualClock } {
  const clock = new ManualClock(1_000_000);
  const options = resolveOptions({
    clock,
    latency: 'off',
    tokenizer: wordTokenizer,
    tokenCosts: { toolPromptTokens: 0, imageTokens: 0 },
    minCacheableTokens: 10,
  });
  return { core: createCore(options), clock };
}

/** A request context on real (unconnected) node:http objects, arrived now. */
function context(c: EmulatorCore, exchange?: Exchange): RequestContext {
  const req = new IncomingMessage(new Socket());
  req.headers = { 'x-api-key': 'test-key' };
  return {
    req,
    res: new ServerResponse(req),
    requestId: 'req_test',
    apiVersion: '2023-06-01',
    signal: new AbortController().signal,
    startedAt: c.clock.now(),
    exchange,
  };
}

const request = (tail: string) =>
  checkMessagesRequest({
    model: MODEL,
    max_tokens: 16,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: words(30, 'shared'), cache_control: { type: 'ephemeral' } },
          { type: 'text', text: tail },
        ],
      },
    ],
  });

describe('the cache step', () => {
  it('plans the write, and a sibling looking up before the response begins reads nothing', () => {
    const { core: c } = core();
    const model = requireApiModel(c, MODEL);
    const first = lookUpCache(c, context(c), request('one'), model);
    expect(first.plan.usage).toMatchObject({ cache_creation_input_tokens: 30, cache_read_input_tokens: 0 });
    expect(first.plan.writes).toHaveLength(1);
    expect(first.missReason).toBeNull(); // no previous message named: nothing to diagnose
    const sibling = lookUpCache(c, context(c), request('two'), model);
    expect(sibling.plan.usage.cache_read_input_tokens).toBe(0);
  });

  it('once the response began (writes committed), the next request reads the prefix', () => {
    const { core: c, clock } = core();
    const model = requireApiModel(c, MODEL);
    const ctx = context(c);
    const first = lookUpCache(c, ctx, request('one'), model);
    clock.advance(100);
    commitWrites(c.store, first.plan, ctx.startedAt, clock.now());
    const next = lookUpCache(c, context(c), request('two'), model);
    expect(next.plan.usage).toMatchObject({ cache_read_input_tokens: 30, cache_creation_input_tokens: 0 });
    expect(next.prefix.fingerprint).toBeDefined();
  });

  it('describes its plan on the exchange record when the exchange is logged', () => {
    const { core: c } = core();
    const exchange: Exchange = {};
    lookUpCache(c, context(c, exchange), request('one'), requireApiModel(c, MODEL));
    expect(exchange.cache).toBeDefined();
    expect(JSON.stringify(exchange.cache)).toContain(MODEL);
  });
});

describe('what the endpoint bills', () => {
  const usage = { input_tokens: 5, output_tokens: 40, cache_read_input_tokens: 30 } as ResponseUsage;

  it('a complete response, streamed or not: its usage', () => {
    expect(billedUsage(usage, true, undefined).billed).toBe(usage);
    expect(billedUsage(usage, false, 'slow').billed).toBe(usage);
  });

  it('a stream that fails or is cut: what message_start reported (one output token at most)', () => {
    for (const fault of ['stream-error', 'cut'] as const) {
      const { billed, startUsage } = billedUsage(usage, true, fault);
      expect(billed).toBe(startUsage);
      expect(billed).toEqual({ ...usage, output_tokens: 1 });
    }
    expect(billedUsage({ ...usage, output_tokens: 0 }, true, 'cut').billed?.output_tokens).toBe(0);
  });

  it('a message that fails: nothing; one cut on the way: all of it', () => {
    expect(billedUsage(usage, false, 'stream-error').billed).toBeUndefined();
    expect(billedUsage(usage, false, 'cut').billed).toBe(usage);
  });
});
