import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { ForkcacheError } from '../../errors.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import { cacheKeyOf } from '../fork-wire.ts';
import { isChatProvider } from '../ids.ts';
import { closedChatHead } from './body.ts';
import { dialectOf } from './dialects.ts';
import { sendChatBytes } from './stream.ts';

/**
 * The warm-up of a Chat Completions fan-out: the head closed at the shared boundary, one
 * output token. It writes the shared prefix (DashScope at the head's markers, OpenAI and
 * DeepSeek automatically) and, there being no token-count endpoint, its `prompt_tokens` is
 * the measure of the shared prefix the ledger's cache efficiency needs. `onReadable` fires
 * when the response is complete: on these providers the entry is readable from then on.
 */
export async function sendChatWarmup(client: OpenAI, prefix: FrozenPrefix, onReadable: () => void, signal?: AbortSignal): Promise<Anthropic.Message> {
  if (!isChatProvider(prefix.provider)) throw new ForkcacheError('INTERNAL', `a ${prefix.provider} head has no Chat Completions warm-up`);
  const body = closedChatHead(prefix, dialectOf(prefix.provider), cacheKeyOf(prefix.sha256));
  const { message } = await sendChatBytes(client, body, { onStart: onReadable, signal });
  return message;
}
