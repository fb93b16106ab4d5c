import type Anthropic from '@anthropic-ai/sdk';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { MODEL, apiError, client, emulator, rawPost } from './helpers.ts';

const both: ScriptedModel = {
  name: 'both',
  respond: () => ({
    content: [
      { type: 'text', text: 'I will read the file now, then report back on what it says.' },
      { type: 'tool_use', name: 'read_file', input: { path: 'src/a.ts', note: 'x'.repeat(120) } },
    ],
  }),
};

const params: Anthropic.MessageCreateParamsNonStreaming = {
  model: MODEL,
  max_tokens: 500,
  tools: [{ name: 'read_file', input_schema: { type: 'object' } }],
  messages: [{ role: 'user', content: 'read src/a.ts' }],
};

/** Parse an SSE body into [event, data] frames, checking every frame has an `event:` line. */
function frames(body: string): [string, Record<string, unknown>][] {
  return body
    .split('\n\n')
    .filter((f) => f.trim() !== '')
    .map((f) => {
      const [eventLine, dataLine] = f.split('\n');
      expect(eventLine).toMatch(/^event: /);
      expect(dataLine).toMatch(/^data: /);
      return [eventLine!.slice(7), JSON.parse(dataLine!.slice(6)) as Record<string, unknown>];
    });
}

const expectedOrder = JSON.parse(
  readFileSync(new URL('../../fixtures/emulator/sse-text-then-tool-use.json', import.meta.url), 'utf8'),
) as { events: string[] };

describe('streaming', () => {
  it('sends the API event sequence, every frame with an event: line', async () => {
    const emu = await emulator({ scripts: { both }, script: 'both' });
    const res = await rawPost(emu, '/v1/messages', JSON.stringify({ ...params, stream: true }));
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const list = frames(await res.text());
    const collapsed = list
      .map(([e]) => e)
      .filter((e, i, all) => e !== 'content_block_delta' || all[i - 1] !== 'content_block_delta');
    expect(collapsed).toEqual(expectedOrder.events);
    for (const [event, data] of list) expect(data['type']).toBe(event);
    const start = list[0]![1]['message'] as Record<string, unknown>;
    expect(start).toMatchObject({ content: [], stop_reason: null, role: 'assistant', model: MODEL });
    const toolStart = list.find(
      ([e, d]) => e === 'content_block_start' && (d['content_block'] as { type: string }).type === 'tool_use',
    )!;
    expect(toolStart[1]['content_block']).toMatchObject({ type: 'tool_use', name: 'read_file', input: {} });
    const json = list.filter(([, d]) => (d['delta'] as { type?: string } | undefined)?.type === 'input_json_delta');
    expect(json.length).toBeGreaterThan(1);
    expect(
      JSON.parse(json.map(([, d]) => (d['delta'] as { partial_json: string }).partial_json).join('')),
    ).toMatchObject({ path: 'src/a.ts' });
  });

  it('streams the same message the non-streaming call returns (SDK finalMessage)', async () => {
    const api = client(await emulator({ scripts: { both }, script: 'both' }));
    const plain = await api.messages.create(params);
    const streamed = await api.messages.stream(params).finalMessage();
    expect(streamed.content).toEqual(plain.content);
    expect(streamed.stop_reason).toBe('tool_use');
    expect(streamed.usage.output_tokens).toBe(plain.usage.output_tokens);
    expect(plain.content[1]).toMatchObject({ type: 'tool_use', id: expect.stringMatching(/^toolu_01/) });
  });

  it('fails mid-stream with an error event (stream-error fault)', async () => {
    const emu = await emulator({ scripts: { both }, script: 'both' });
    const api = client(emu);
    const seen: string[] = [];
    const err = await apiError(
      (async () => {
        const stream = await api.messages.create(
          { ...params, stream: true },
          { headers: { 'x-forkcache-fault': 'stream-error' } },
        );
        for await (const event of stream) seen.push(event.type);
      })(),
    );
    expect(seen[0]).toBe('message_start');
    expect(err.type).toBe('overloaded_error');
    expect(emu.stats().requests).toMatchObject({ errors: 1, faults: { 'stream-error': 1 } });
  });

  it('cuts output at max_tokens and at stop sequences', async () => {
    const api = client(await emulator());
    const cut = await api.messages.create({
      model: MODEL,
      max_tokens: 3,
      messages: [{ role: 'user', content: 'a long question here' }],
    });
    expect(cut).toMatchObject({ stop_reason: 'max_tokens', usage: { output_tokens: 3 } });
    expect((cut.content[0] as Anthropic.TextBlock).text.split(/\s+/).filter(Boolean).length).toBeLessThanOrEqual(3);
    const stopped = await api.messages.create({
      model: MODEL,
      max_tokens: 300,
      stop_sequences: ['Result:'],
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(stopped).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'Result:',
      content: [{ type: 'text', text: 'Scope: hello\n' }],
    });
  });

  it('pre-warms with max_tokens 0: empty content, stop_reason max_tokens, cache written', async () => {
    const api = client(await emulator());
    const warm = await api.messages.create({
      model: MODEL,
      max_tokens: 0,
      system: [
        {
          type: 'text',
          text: 'one two three four five six seven eight nine ten eleven',
          cache_control: { type: 'ephemeral' },
        },
      ],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(warm).toMatchObject({
      content: [],
      stop_reason: 'max_tokens',
      usage: { output_tokens: 0, cache_creation_input_tokens: 11, input_tokens: 1 },
    });
  });
});
