import type { MessagesRequest, RequestBlock, RequestMessage, ToolChoice, ToolDefinition } from '../types.ts';
import { findJsonShapeProblem } from '../../../core/util/json-shape.ts';
import { OpenAiError } from './errors.ts';
import type { ChatMessage, ChatRequest, ChatTool } from './schema.ts';

/*
 * Chat Completions → the Messages shape the rest of the emulator speaks: the cache renderer
 * (tools → messages, one position per content part) and the scripted models (which read
 * tool_use / tool_result blocks) then work unchanged. The mapping is deterministic, so equal
 * Chat bytes give equal cache keys; markers (`cache_control`) stay on the parts that carried them.
 */

/** Output budget when the request names none (the scripted models answer far below it). */
export const DEFAULT_MAX_TOKENS = 8192;

/**
 * Tool messages carry no error flag on this API. Tools that failed conventionally answer with
 * text starting `Error:` (forkcache's OpenAI-format loop and Qwen Code both do); the scripted
 * models see those as `is_error` results, as they would on the Messages API.
 */
export const TOOL_ERROR_PREFIX = /^\s*(Error:|<tool_use_error>)/;

type Part = Record<string, unknown> & { type: string };

function partToBlock(part: Part): RequestBlock {
  if (part.type === 'image_url') {
    const {
      image_url: image,
      cache_control,
      ...rest
    } = part as Part & { image_url: { url: string }; cache_control?: RequestBlock['cache_control'] };
    return {
      ...rest,
      type: 'image',
      source: { type: 'url', url: image.url },
      ...(cache_control ? { cache_control } : {}),
    };
  }
  return part as RequestBlock;
}

function contentBlocks(content: ChatMessage['content']): RequestBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return (content as Part[]).map(partToBlock);
}

function textOfContent(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return ((content ?? []) as Part[])
    .filter((p) => p.type === 'text')
    .map((p) => String(p['text']))
    .join('\n');
}

/**
 * A tool call's `arguments` (a JSON string) as the Messages-shaped `input`. Nesting too deep to
 * handle is a 400 naming the field, as it is anywhere else in a body: parsed, a 20,000-deep
 * value overflowed the stack further on and came back a 500, which every SDK retries in vain.
 */
export function parseArguments(raw: string, path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { _arguments: raw }; // not JSON: keep the text, the model wrote it that way
  }
  const problem = findJsonShapeProblem(value);
  if (problem?.kind === 'depth') throw OpenAiError.invalid(`${path}: ${problem.path}: ${problem.message}`, path);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return { _arguments: raw };
}

function toolResult(message: Extract<ChatMessage, { role: 'tool' }>): RequestBlock {
  const text = textOfContent(message.content);
  const marker = Array.isArray(message.content)
    ? (message.content as Part[]).find((p) => p['cache_control'])?.['cache_control']
    : undefined;
  return {
    type: 'tool_result',
    tool_use_id: message.tool_call_id,
    content: text,
    ...(TOOL_ERROR_PREFIX.test(text) ? { is_error: true } : {}),
    ...(marker ? { cache_control: marker as NonNullable<RequestBlock['cache_control']> } : {}),
  };
}

function assistantBlocks(message: Extract<ChatMessage, { role: 'assistant' }>, index: number): RequestBlock[] {
  const blocks = contentBlocks(message.content);
  (message.tool_calls ?? []).forEach((call, j) => {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseArguments(call.function.arguments, `messages[${index}].tool_calls[${j}].function.arguments`),
    });
  });
  return blocks;
}

/** Consecutive tool messages are one turn of results, as a Messages user turn holds them. */
function convertMessages(messages: readonly ChatMessage[]): RequestMessage[] {
  const out: RequestMessage[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      const last = out[out.length - 1];
      const block = toolResult(message as Extract<ChatMessage, { role: 'tool' }>);
      if (
        last &&
        last.role === 'user' &&
        Array.isArray(last.content) &&
        last.content.every((b) => b.type === 'tool_result')
      )
        last.content.push(block);
      else out.push({ role: 'user', content: [block] });
      continue;
    }
    if (message.role === 'assistant') {
      out.push({
        role: 'assistant',
        content: assistantBlocks(message as Extract<ChatMessage, { role: 'assistant' }>, index),
      });
      continue;
    }
    const role = message.role === 'user' ? 'user' : 'system';
    out.push({ role, content: contentBlocks(message.content) });
  }
  return out;
}

/** Markers on tools are ignored by DashScope and meaningless elsewhere: dropped here. */
function convertTool(tool: ChatTool): ToolDefinition {
  const fn = tool.function;
  return {
    name: fn.name,
    ...(fn.description === undefined ? {} : { description: fn.description }),
    input_schema: fn.parameters ?? { type: 'object', properties: {} },
  };
}

function convertToolChoice(choice: ChatRequest['tool_choice']): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  return { type: 'tool', name: choice.function.name };
}

/** The Messages-shaped view of a Chat request (see the file comment). */
export function toMessagesRequest(chat: ChatRequest): MessagesRequest {
  const stop = chat.stop == null ? [] : typeof chat.stop === 'string' ? [chat.stop] : chat.stop;
  const toolChoice = convertToolChoice(chat.tool_choice);
  return {
    model: chat.model,
    max_tokens: chat.max_completion_tokens ?? chat.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: convertMessages(chat.messages),
    ...(chat.tools && chat.tools.length > 0 ? { tools: chat.tools.map(convertTool) } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(stop.length > 0 ? { stop_sequences: stop } : {}),
    stream: chat.stream === true,
  };
}
