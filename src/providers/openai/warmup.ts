import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { Clock } from '../../core/util/clock.ts';
import { ForkcacheError, toWireError } from '../../core/util/errors.ts';
import { normalizeUsage, totalInputTokens, type UsageInput } from '../../core/ledger/usage.ts';
import type { FrozenPrefix } from '../../core/prefix/freeze.ts';
import { cacheKeyOf } from '../../core/loop/transport.ts';
import { providerWireOf } from '../../core/wire/providers.ts';
import { closedChatHead } from './body.ts';
import { sendChatBytes } from './stream.ts';
import { prewarmBody, sendResponsesBytes } from './responses.ts';

/**
 * The warm-up of a Chat Completions fan-out: the head closed at the shared boundary, one
 * output token (on the Responses API: a `prewarm`, no output token at all). It writes the shared prefix (DashScope at the head's markers, OpenAI and
 * DeepSeek automatically) and, there being no token-count endpoint, its `prompt_tokens` is
 * the measure of the shared prefix the ledger's cache efficiency needs. `onReadable` fires
 * when the response is complete: on these providers the entry is readable from then on.
 */
export async function sendChatWarmup(
  client: OpenAI,
  prefix: FrozenPrefix,
  onReadable: () => void,
  signal?: AbortSignal,
): Promise<Anthropic.Message> {
  const dialect = providerWireOf(prefix.provider).chat;
  if (!dialect) throw new ForkcacheError('INTERNAL', `a ${prefix.provider} head has no Chat Completions warm-up`);
  if (prefix.responses) {
    // the Responses API's prewarm: the prefix written, no output generated (none paid)
    const { message } = await sendResponsesBytes(client, prewarmBody(prefix, cacheKeyOf(prefix.sha256)), {
      onStart: onReadable,
      signal,
    });
    return message;
  }
  const body = closedChatHead(prefix, dialect, cacheKeyOf(prefix.sha256));
  const { message } = await sendChatBytes(client, body, { onStart: onReadable, signal });
  return message;
}

/** What a Chat warm-up measured: the shared prefix, what of it was already cached, its usage and start. */
interface ChatWarmupResult {
  sharedTokens: number;
  cachedTokens: number;
  usage: UsageInput;
  at: number;
}

/**
 * Run the warm-up under the fan-out's warm gate: siblings wait while it is out, the gate opens
 * when it completes, and a failure hands the warming to the first child (which the gate then
 * holds its siblings for). Logged as `warmup-start` / `warmup-end` / `warmup-failed`.
 */
export async function chatWarmup(options: {
  send: (onReadable: () => void) => Promise<Anthropic.Message>;
  gate: { beginWarming(): void; markWarm(): void; warmingFailed(): void };
  clock: Clock;
  log: (record: Record<string, unknown>) => void;
}): Promise<ChatWarmupResult | undefined> {
  const { gate, clock, log } = options;
  gate.beginWarming();
  const at = clock.now();
  try {
    log({ type: 'warmup-start', at });
    const message = await options.send(() => gate.markWarm());
    const usage = normalizeUsage(message.usage);
    log({ type: 'warmup-end', at: clock.now(), usage: message.usage });
    return {
      sharedTokens: totalInputTokens(usage),
      cachedTokens: usage.cache_read_input_tokens,
      usage: message.usage,
      at,
    };
  } catch (err) {
    log({ type: 'warmup-failed', at: clock.now(), error: toWireError(err) });
    gate.warmingFailed();
    return undefined;
  }
}
