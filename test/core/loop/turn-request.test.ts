import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { type LoopSettings, startForkState } from '../../../src/core/loop/fork-state.ts';
import type { TranscriptSink } from '../../../src/core/loop/transcript-sink.ts';
import { sendNextTurn } from '../../../src/core/loop/turn-request.ts';
import { type LoopEvent, OPEN_GATE } from '../../../src/core/loop/types.ts';
import { childRequestBody } from '../../../src/core/prefix/body.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { systemClock } from '../../../src/core/util/clock.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { bigSnapshot, sharedEmulator } from '../engine/helpers.ts';

const emulator = sharedEmulator({ script: 'refactor' });

describe('sendNextTurn: one turn sent and recorded', () => {
  it('sends the head and the conversation so far, and records the answer everywhere', async () => {
    const prefix = freeze(bigSnapshot(`turn-request-${Date.now()}`));
    const client = new Anthropic({ apiKey: 'test', baseURL: emulator.current.url, maxRetries: 0 });
    const child = prefix.child('rename fetchData to loadData in users.ts');
    const events: LoopEvent[] = [];
    const turns: unknown[] = [];
    const layouts: number[] = [];
    const loop: LoopSettings = {
      clock: systemClock,
      gate: OPEN_GATE,
      maxTurns: 10,
      maxTokens: 1000,
      emit: (e) => events.push(e),
    };
    const state = startForkState(child.messages, prefix.head.byteLength, 4);
    const expected = childRequestBody(
      prefix,
      { tailBlocks: child.tailBlocks, messages: [...child.messages] },
      {
        max_tokens: 1000,
        stream: true,
      },
    );
    const message = await sendNextTurn(
      {
        prefix,
        child,
        transport: { send: (body, o) => streamMessageBytes(client, body, o) },
        // the provider's layout, when it brings one: here the Messages API's own
        body: (c, perRequest, marker) => {
          layouts.push(c.messages.length);
          return childRequestBody(prefix, c, perRequest, { marker });
        },
        transcript: { turn: (r) => turns.push(r) } as Partial<TranscriptSink> as TranscriptSink,
      },
      loop,
      state,
    );
    expect(layouts).toEqual([child.messages.length]);
    expect(state.turn).toBe(5);
    expect(state.sentBytes).toBe(expected.byteLength);
    expect(state.requests).toEqual([
      expect.objectContaining({ turn: 5, messageId: message.id, stopReason: message.stop_reason }),
    ]);
    const request = state.requests[0]!;
    expect(request.sentAt).toBeLessThanOrEqual(request.startedAt);
    expect(request.startedAt).toBeLessThanOrEqual(request.endedAt);
    expect(state.own.at(-1)).toEqual({ role: 'assistant', content: expect.any(Array) });
    expect(turns).toEqual([{ turn: 5, assistant: state.own.at(-1), request }]);
    expect(events.map((e) => e.type)).toEqual(['turn-start', 'response-start', 'turn-end']);
    expect(state.finalText).toBe(message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n'));
  });
});
