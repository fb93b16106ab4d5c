import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { markerOf } from '../../core/prefix/markers.ts';
import { chatPerRequest } from './body.ts';
import { chatToolChoice, chatTools, systemMessage } from '../../core/prefix/chat-head.ts';
import { type ChatMessage, toChatMessages } from '../../core/prefix/chat-messages.ts';
import type { ChatDialect } from '../../core/wire/chat-dialect.ts';
import { sendChatBytes } from './stream.ts';

/** An ordinary (not forked) request in the neutral shape: what an agent such as the demo's parent sends. */
interface NeutralRequest {
  model: string;
  max_tokens: number;
  system?: string | Anthropic.TextBlockParam[] | undefined;
  tools?: Anthropic.ToolUnion[] | undefined;
  tool_choice?: Anthropic.ToolChoice | undefined;
  messages: Anthropic.MessageParam[];
}

/**
 * The same request as Chat Completions bytes, through the same conversions as a frozen head
 * (the system prompt, tools and history render to the bytes the forks' head starts with, so
 * the parent's own cache entries serve its children). Markers survive only on DashScope.
 */
function chatRequestBytes(request: NeutralRequest, dialect: ChatDialect): Uint8Array {
  const object: Record<string, unknown> = { model: request.model };
  if (request.tools && request.tools.length > 0) object['tools'] = chatTools(request.tools, false);
  if (request.tool_choice) object['tool_choice'] = chatToolChoice(request.tool_choice);
  const messages: ChatMessage[] = [];
  const system = request.system;
  if (system !== undefined && system !== '' && !(Array.isArray(system) && system.length === 0)) {
    const marked = Array.isArray(system) && system.some((b) => markerOf(b));
    messages.push(systemMessage(system, dialect, dialect.markers && marked));
  }
  request.messages.forEach((m, i) => messages.push(...toChatMessages(m, dialect, `messages[${i}]`)));
  object['messages'] = messages;
  Object.assign(object, chatPerRequest({ max_tokens: request.max_tokens }, dialect, undefined));
  return new TextEncoder().encode(JSON.stringify(object));
}

/** Send an ordinary request to a Chat Completions provider; the answer in the neutral shape. */
export async function sendChatRequest(
  client: OpenAI,
  request: NeutralRequest,
  dialect: ChatDialect,
): Promise<Anthropic.Message> {
  const { message } = await sendChatBytes(client, chatRequestBytes(request, dialect));
  return message;
}
