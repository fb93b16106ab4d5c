import type Anthropic from '@anthropic-ai/sdk';
import type { ForkChild } from '../fork/layouts.ts';
import { normalizeUsage } from '../ledger/usage.ts';
import { childRequestBody, type PerRequest } from '../prefix/body.ts';
import type { HeadEnd } from '../prefix/sab.ts';
import type { CacheTtl } from '../wire/cache.ts';
import type { ForkState, LoopSettings } from './fork-state.ts';
import { toAssistantParam, textOf } from './messages.ts';
import { sendWithRetries, type SendOptions } from './send-turn.ts';
import type { RequestRecord } from './types.ts';

/** A provider's request layout: head bytes + this child's suffix (`ForkLoopOptions.body`). */
type RequestLayout = (child: ForkChild, perRequest: PerRequest, marker: CacheTtl | false) => Uint8Array;

/** The loop's options that one turn's request reads (a `ForkLoopOptions` is one). */
interface TurnRequestOptions extends SendOptions {
  prefix: { readonly head: Uint8Array; readonly headEnd: HeadEnd };
  child: ForkChild;
  body?: RequestLayout | undefined;
  marker?: CacheTtl | false | undefined;
}

/**
 * Make the fork's next turn: its request (the frozen head + its conversation so far) sent
 * until answered (`sendWithRetries`), the answer recorded in the state, the transcript and
 * the events. Returns the model's message; a turn that cannot be sent throws.
 */
export async function sendNextTurn(
  options: TurnRequestOptions,
  loop: LoopSettings,
  state: ForkState,
): Promise<Anthropic.Message> {
  const { clock, emit, maxTokens } = loop;
  state.turn += 1;
  const turn = state.turn;
  const child: ForkChild = { tailBlocks: options.child.tailBlocks, messages: state.own };
  const perRequest = { max_tokens: maxTokens, stream: true };
  const marker = options.marker ?? '5m';
  const body = options.body
    ? options.body(child, perRequest, marker)
    : childRequestBody(options.prefix, child, perRequest, { marker });
  emit({ type: 'turn-start', turn, at: clock.now() });
  const { message, requestId, sentAt, startedAt } = await sendWithRetries({
    options,
    gate: loop.gate,
    clock,
    body,
    turn,
    maxTokens,
    emit,
    failedAttempts: state.failedAttempts,
    sentBytes: state.sentBytes,
  });
  state.sentBytes = body.byteLength;
  const record: RequestRecord = {
    turn,
    requestId,
    messageId: message.id,
    usage: normalizeUsage(message.usage),
    stopReason: message.stop_reason,
    sentAt,
    startedAt,
    endedAt: clock.now(),
  };
  state.requests.push(record);
  const assistant = toAssistantParam(message);
  state.own.push(assistant);
  options.transcript?.turn({ turn, assistant, request: record });
  emit({ type: 'turn-end', turn, at: record.endedAt, request: record });
  state.finalText = textOf(message);
  return message;
}
