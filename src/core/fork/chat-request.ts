import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';

/*
 * A Chat Completions request an app sent (the AI SDK's OpenAI and OpenAI-compatible providers),
 * in the Messages shape a snapshot is captured in. The Chat head of a fan-out is rendered back
 * from that shape (src/core/prefix/chat-head.ts), so this is its inverse: every message, part and
 * tool of the app's request comes back as the same JSON (test/core/fork/chat-request.test.ts checks
 * the round trip on the AI SDK's own requests). What has no inverse is refused, naming the
 * field, rather than forked from a prefix that would not match.
 */

type Json = Record<string, unknown>;
type Block = Anthropic.ContentBlockParam;

/** An assistant message of a Chat response or request, as its blocks (text, then the calls). */
export interface ChatAssistantMessage {
  content?: unknown;
  tool_calls?: readonly { id: string; function: { name: string; arguments: string } }[] | undefined;
}

function refuse(field: string, what: string): ForkcacheError {
  return new ForkcacheError('SNAPSHOT_INVALID', `chat request: ${field}: ${what}`, { data: { path: field } });
}

const marker = (part: Json): { cache_control?: Anthropic.CacheControlEphemeral } =>
  part['cache_control'] ? { cache_control: { type: 'ephemeral' } } : {};

function partBlock(part: unknown, field: string): Anthropic.TextBlockParam | Anthropic.ImageBlockParam {
  const p = (part ?? {}) as Json;
  if (p['type'] === 'text' && typeof p['text'] === 'string') return { type: 'text', text: p['text'], ...marker(p) };
  if (p['type'] === 'image_url') {
    const image = (p['image_url'] ?? {}) as Json;
    if (image['detail'] !== undefined) throw refuse(`${field}.image_url.detail`, 'image detail has no Messages form');
    const url = String(image['url'] ?? '');
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    const source = data
      ? { type: 'base64' as const, media_type: data[1] as 'image/png', data: data[2]! }
      : { type: 'url' as const, url };
    return { type: 'image', source, ...marker(p) };
  }
  throw refuse(field, `a "${String(p['type'])}" part has no Messages form`);
}

function contentBlocks(content: unknown, field: string): string | Block[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw refuse(`${field}.content`, 'expected a string or an array of parts');
  return content.map((part, i) => partBlock(part, `${field}.content[${i}]`));
}

/** The assistant blocks of a Chat message: its text, then a `tool_use` per call (arguments parsed). */
export function assistantBlocks(message: ChatAssistantMessage, field = 'assistant'): Block[] {
  const blocks: Block[] = [];
  const content = message.content;
  if (typeof content === 'string') {
    if (content !== '') blocks.push({ type: 'text', text: content });
  } else if (Array.isArray(content)) {
    content.forEach((part, i) => blocks.push(partBlock(part, `${field}.content[${i}]`)));
  } else if (content !== null && content !== undefined) throw refuse(`${field}.content`, 'expected text');
  (message.tool_calls ?? []).forEach((call, i) => {
    let input: unknown;
    try {
      input = JSON.parse(call.function.arguments || '{}');
    } catch {
      throw refuse(`${field}.tool_calls[${i}].function.arguments`, 'not JSON');
    }
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
  });
  return blocks;
}

function toolResult(message: Json, field: string): Anthropic.ToolResultBlockParam {
  const content = message['content'];
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content) && content.length === 1 && (content[0] as Json)['type'] === 'text'
        ? String((content[0] as Json)['text'])
        : undefined;
  if (text === undefined) throw refuse(`${field}.content`, 'a tool message is one text');
  return { type: 'tool_result', tool_use_id: String(message['tool_call_id']), content: text };
}

function systemOf(message: Json, field: string): string | Anthropic.TextBlockParam[] {
  const content = contentBlocks(message['content'], field);
  if (typeof content === 'string') return content;
  return content.map((b, i) => {
    if (b.type !== 'text') throw refuse(`${field}.content[${i}]`, 'a system message holds text only');
    return b;
  });
}

function toolOf(tool: unknown, field: string): Anthropic.Tool {
  const t = (tool ?? {}) as Json;
  const fn = (t['function'] ?? {}) as Json;
  if (t['type'] !== 'function' || typeof fn['name'] !== 'string')
    throw refuse(field, 'only function tools have a Messages form');
  return {
    name: fn['name'],
    ...(typeof fn['description'] === 'string' ? { description: fn['description'] } : {}),
    input_schema: (fn['parameters'] ?? { type: 'object', properties: {} }) as Anthropic.Tool.InputSchema,
    ...(typeof fn['strict'] === 'boolean' ? { strict: fn['strict'] } : {}),
  };
}

function toolChoiceOf(choice: unknown): Anthropic.ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  const name = ((choice as Json)['function'] as Json | undefined)?.['name'];
  if (typeof name === 'string') return { type: 'tool', name };
  throw refuse('tool_choice', `${JSON.stringify(choice)} has no Messages form`);
}

/**
 * The Messages-shaped request (`captureSnapshot`'s input) of a Chat Completions request, with
 * `assistant` (the response's message) appended as the last turn. One leading system message
 * becomes `system`; tool messages become one user turn of results, joined by a user message
 * that follows them (as the Chat head renders such a turn back).
 *
 * @throws ForkcacheError `SNAPSHOT_INVALID` naming the field: a `developer` message (the AI
 *   SDK's default for reasoning models; `systemMessageMode: 'system'` sends the same as `system`),
 *   a second system message, two user messages in a row, a part with no Messages form.
 */
export function messagesRequestFromChat(chat: Json, assistant?: ChatAssistantMessage): Json {
  const messages = chat['messages'];
  if (!Array.isArray(messages)) throw refuse('messages', 'expected an array');
  const out: Anthropic.MessageParam[] = [];
  let system: string | Anthropic.TextBlockParam[] | undefined;
  messages.forEach((raw: unknown, i) => {
    const message = (raw ?? {}) as Json;
    const field = `messages[${i}]`;
    const last = out.at(-1);
    switch (message['role']) {
      case 'system':
        if (i !== 0) throw refuse(field, 'a system message after the first message has no Messages form');
        system = systemOf(message, field);
        return;
      case 'developer':
        throw refuse(
          field,
          "a developer message has no Messages form: send it as system (the AI SDK's providerOptions: { openai: { systemMessageMode: 'system' } })",
        );
      case 'user': {
        const content = contentBlocks(message['content'], field);
        if (last?.role === 'user') {
          const results = Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result');
          if (!results) throw refuse(field, 'two user messages in a row have no Messages form');
          const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
          (last.content as Block[]).push(...blocks);
          return;
        }
        out.push({ role: 'user', content });
        return;
      }
      case 'assistant':
        out.push({ role: 'assistant', content: assistantBlocks(message as ChatAssistantMessage, field) });
        return;
      case 'tool': {
        const block = toolResult(message, field);
        if (last?.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result'))
          (last.content as Block[]).push(block);
        else out.push({ role: 'user', content: [block] });
        return;
      }
      default:
        throw refuse(`${field}.role`, `"${String(message['role'])}" has no Messages form`);
    }
  });
  if (assistant) out.push({ role: 'assistant', content: assistantBlocks(assistant) });
  const tools = chat['tools'];
  const toolChoice = toolChoiceOf(chat['tool_choice']);
  return {
    model: chat['model'],
    ...(system === undefined ? {} : { system }),
    ...(Array.isArray(tools) && tools.length > 0 ? { tools: tools.map((t, i) => toolOf(t, `tools[${i}]`)) } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(typeof chat['temperature'] === 'number' ? { temperature: chat['temperature'] } : {}),
    ...(typeof chat['top_p'] === 'number' ? { top_p: chat['top_p'] } : {}),
    messages: out,
  };
}
