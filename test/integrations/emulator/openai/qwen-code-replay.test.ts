import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { claudeTokenizer } from '../../../../src/integrations/emulator/tokens/tokenizer.ts';
import { chatClient, chatEmulator, usageOf } from './helpers.ts';

/*
 * Replays what Qwen Code 0.24.4 sent to `forkcache emulator --api dashscope` (see the README,
 * "Qwen Code against the emulator"): its main turn and its memory-extractor side request, with
 * its headers, markers (system part, last user part, last tool) and extra fields, through the
 * real `openai` client, counted with the emulator's default tokenizer, as when recorded.
 */

interface Recorded {
  request: { url: string; headers: Record<string, string>; body: Record<string, any> };
  response: { status: number; usage: Record<string, any> };
}
const fixture = (name: string): Recorded =>
  JSON.parse(readFileSync(new URL(`../../../fixtures/qwen-code-openai/${name}`, import.meta.url), 'utf8')) as Recorded;
const main = fixture('01-main-turn.json');
const memory = fixture('02-memory-extractor.json');

async function replay(emu: Awaited<ReturnType<typeof chatEmulator>>, recorded: Recorded): Promise<Record<string, any>> {
  const {
    'content-type': _type,
    'user-agent': _agent,
    'x-stainless-package-version': _version,
    ...dashscope
  } = recorded.request.headers;
  const client = chatClient(emu, 'dashscope', { defaultHeaders: dashscope });
  const stream = await client.chat.completions.create({ ...recorded.request.body, stream: true } as never);
  let usage: Record<string, any> | undefined;
  let text = '';
  for await (const chunk of stream as unknown as AsyncIterable<{
    choices: { delta: { content?: string } }[];
    usage?: Record<string, any> | null;
  }>) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  expect(text).toMatch(/^Scope: (Say hello in one short sentence\.|Managed memory has TWO directories)/);
  return usage!;
}

describe('Qwen Code 0.24.4 requests, replayed against the DashScope mode', () => {
  it('were recorded as DashScope requests: the cache header, markers where Qwen Code puts them', () => {
    expect(main.request.url).toBe('/compatible-mode/v1/chat/completions');
    expect(main.request.headers['x-dashscope-cachecontrol']).toBe('enable');
    const body = main.request.body;
    expect(body['stream_options']).toEqual({ include_usage: true });
    const marked = body['messages'].flatMap((m: any, i: number) =>
      Array.isArray(m.content) ? m.content.flatMap((p: any, j: number) => (p.cache_control ? [`${i}.${j}`] : [])) : [],
    );
    expect(marked).toEqual(['0.0', `1.${body['messages'][1].content.length - 1}`]);
    expect(body['tools'].at(-1).cache_control).toEqual({ type: 'ephemeral' });
    expect(main.response.usage['prompt_tokens_details']).toMatchObject({ cached_tokens: 0, cache_type: 'ephemeral' });
  });

  it('writes the whole prompt at the last marker, ignores the tool marker, and answers in the recorded usage shape', async () => {
    const emu = await chatEmulator('dashscope', { tokenizer: claudeTokenizer });
    const usage = await replay(emu, main);
    expect(Object.keys(usage).sort()).toEqual(Object.keys(main.response.usage).sort());
    expect(Object.keys(usage['prompt_tokens_details']).sort()).toEqual(
      Object.keys(main.response.usage['prompt_tokens_details']).sort(),
    );
    expect(usage['prompt_tokens_details']).toMatchObject({
      cached_tokens: 0,
      cache_creation_input_tokens: usage['prompt_tokens'],
    });
    // Two entries: the system part's and the last user part's; none for the marked tool.
    expect(
      emu
        .cacheEntries()
        .map((e) => e.tokens)
        .sort((a, b) => a - b),
    ).toEqual([expect.any(Number), usage['prompt_tokens']]);
    expect(emu.cacheEntries()).toHaveLength(2);
  });

  it('a second session with the same prompt reads all of it; the memory extractor (another system prompt) misses', async () => {
    const emu = await chatEmulator('dashscope', { tokenizer: claudeTokenizer });
    const first = await replay(emu, main);
    const again = await replay(emu, main);
    expect(again['prompt_tokens_details']).toMatchObject({
      cached_tokens: first['prompt_tokens'],
      cache_creation_input_tokens: 0,
    });
    const side = await replay(emu, memory);
    expect(side['prompt_tokens_details']).toMatchObject({
      cached_tokens: 0,
      cache_creation_input_tokens: side['prompt_tokens'],
    });
    expect(usageOf({ usage: side })['prompt_tokens']).toBeGreaterThan(1_024);
  });
});
