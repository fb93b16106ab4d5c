import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { findModel } from '../../../src/core/models/catalogue.ts';
import { cc, emulator, MODEL, proxy, sdk, words } from './helpers.ts';

const tool = (name: string, description: string): Anthropic.Tool => ({
  name,
  description,
  input_schema: { type: 'object', properties: {} },
});
const billing = (cch: string, subagent = false): Anthropic.TextBlockParam => ({
  type: 'text',
  text: `x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=cli;${subagent ? ' cc_is_subagent=true;' : ''} cch=${cch};`,
});

async function send(
  client: Anthropic,
  params: Partial<Anthropic.MessageCreateParamsNonStreaming>,
  headers: Record<string, string> = {},
): Promise<Anthropic.Message> {
  return client.messages.create(
    { model: MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'go' }], ...params },
    { headers },
  );
}

describe('miss diagnosis', () => {
  it('names changed tool definitions', async () => {
    const px = await proxy({ upstream: (await emulator()).url });
    const client = sdk(px.url);
    const system = [{ type: 'text' as const, text: words(500, 'sys'), cache_control: cc }];
    const first = await send(client, { tools: [tool('read', 'read a file')], system });
    // The API's own diagnosis, when asked for, is recorded next to the proxy's.
    await send(client, {
      tools: [tool('read', 'read a file, faster')],
      system,
      diagnostics: { previous_message_id: first.id },
    } as Partial<Anthropic.MessageCreateParamsNonStreaming>);
    const [, second] = px.ledger.records();
    expect(second!.usage!.cache_read_input_tokens).toBe(0);
    expect(second!.diagnosis).toMatchObject({ reason: 'tools_changed', relatedTo: 1 });
    expect(second!.apiMissReason).toMatchObject({ type: 'tools_changed' });
  });

  it("names a prefix below the model's minimum cacheable length instead of blaming the upstream", async () => {
    // The upstream keeps the catalogue's minimum (the other tests lower it to 10 tokens).
    const minimum = findModel(MODEL)!.minCacheableTokens;
    const px = await proxy({ upstream: (await emulator({ minCacheableTokens: minimum })).url });
    const client = sdk(px.url);
    // One prompt shorter than the minimum, one longer, each sent twice with the same marker.
    const short = [{ type: 'text' as const, text: words(10, 'short'), cache_control: cc }];
    const long = [{ type: 'text' as const, text: words(minimum, 'long'), cache_control: cc }];
    for (const system of [short, short, long, long]) await send(client, { system });
    const [, shortAgain, , longAgain] = px.ledger.records();
    expect(shortAgain!.usage!.cache_read_input_tokens).toBe(0);
    expect(shortAgain!.diagnosis).toMatchObject({ reason: 'below_minimum', missedTokens: 0 });
    expect(shortAgain!.diagnosis!.detail).toContain(`minimum cacheable length of ${minimum}`);
    expect(longAgain!.usage!.cache_read_input_tokens).toBeGreaterThan(0);
    expect(longAgain!.diagnosis).toMatchObject({ reason: 'read', relatedTo: 3 });
  });

  it('names a marker whose lookback cannot reach the entry an earlier request wrote', async () => {
    const px = await proxy({ upstream: (await emulator()).url });
    const client = sdk(px.url);
    const blocks = Array.from({ length: 30 }, (_, i) => ({ type: 'text' as const, text: words(40, `b${i}x`) }));
    await send(client, {
      messages: [
        { role: 'user', content: [...blocks.slice(0, 3).map((b, i) => (i === 2 ? { ...b, cache_control: cc } : b))] },
      ],
    });
    await send(client, {
      messages: [{ role: 'user', content: blocks.map((b, i) => (i === 29 ? { ...b, cache_control: cc } : b)) }],
    });
    const [, second] = px.ledger.records();
    expect(second!.usage!.cache_read_input_tokens).toBe(0);
    expect(second!.diagnosis).toMatchObject({
      reason: 'marker_too_far_back',
      relatedTo: 1,
      firstDiff: { path: 'messages.0.content.3' },
    });
    expect(second!.diagnosis!.missedTokens).toBeGreaterThan(100);
  });

  it("names Claude Code's billing block when the upstream caches it, and --strip-billing-block fixes it (measured)", async () => {
    const system = (cch: string) => [
      billing(cch),
      { type: 'text' as const, text: words(800, 'cc'), cache_control: cc },
    ];
    const run = async (strip: boolean) => {
      // An upstream that keys the billing block, as third-party gateways do (the emulator's strict mode).
      const px = await proxy({
        upstream: (await emulator({ cacheBillingBlock: true })).url,
        stripBillingBlock: strip,
      });
      const client = sdk(px.url);
      await send(client, { system: system('aaa') });
      await send(client, { system: system('bbb') });
      return { px, records: px.ledger.records() };
    };
    const kept = await run(false);
    expect(kept.records[1]!.usage!.cache_read_input_tokens).toBe(0);
    expect(kept.records[1]!.diagnosis).toMatchObject({ reason: 'volatile_system_block', relatedTo: 1 });
    const stripped = await run(true);
    expect(stripped.records.every((r) => r.strippedBilling)).toBe(true);
    expect(stripped.records[1]!.usage!.cache_read_input_tokens).toBeGreaterThan(800);
    expect(stripped.records[1]!.diagnosis!.reason).toBe('read');
    expect(stripped.records[1]!.savedUsd.stripBilling).toBeGreaterThan(0);
    expect(stripped.px.summary().saved_by_proxy_usd.strip_billing_block).toBe(
      stripped.records[1]!.savedUsd.stripBilling,
    );
  });

  it('groups a Claude Code fork fan-out by session header, boilerplate and shared prefix', async () => {
    const px = await proxy({ upstream: (await emulator()).url });
    const client = sdk(px.url);
    const session = { 'x-claude-code-session-id': 'sess-1' };
    const tools = [tool('Agent', 'spawn a fork')];
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: words(600, 'task'), cache_control: cc }] },
    ];
    const system = [billing('p'), { type: 'text' as const, text: words(300, 'sys'), cache_control: cc }];
    await send(client, { tools, system, messages: history }, session);
    const calls = [0, 1, 2].map((i) => ({
      type: 'tool_use' as const,
      id: `toolu_${i}`,
      name: 'Agent',
      input: { subagent_type: 'fork', prompt: `part ${i}` },
    }));
    const child = (i: number) =>
      send(
        client,
        {
          tools,
          system: [billing('c', true), system[1]!],
          messages: [
            ...history.map((m) => ({ ...m, content: [{ type: 'text' as const, text: words(600, 'task') }] })),
            { role: 'assistant', content: [calls[i]!] },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'Fork started' },
                {
                  type: 'text',
                  text: `<fork-boilerplate>rules</fork-boilerplate>\nDirective: part ${i}`,
                  cache_control: cc,
                },
              ],
            },
          ],
        },
        session,
      );
    await Promise.all([0, 1, 2].map(child));
    const records = px.ledger.records();
    expect(new Set(records.map((r) => r.session))).toEqual(new Set(['sess-1']));
    const children = records.slice(1);
    expect(children.map((r) => r.kind)).toEqual(['fork', 'fork', 'fork']);
    expect(children.map((r) => r.label).sort()).toEqual(['part 0', 'part 1', 'part 2']);
    expect(new Set(children.map((r) => r.thread)).size).toBe(3);
    const [fanout] = px.summary().fanouts;
    expect(fanout!.members.map((m) => m.seq).sort()).toEqual([2, 3, 4]);
  });
});
