import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import type { ChatDialect } from '../wire/chat-dialect.ts';

type Block = Anthropic.ContentBlockParam;
type Message = Anthropic.MessageParam;

/** A Chat Completions content part as forkcache writes it (key order fixed: the bytes are the cache key). */
export type ChatPart =
  | { type: 'text'; text: string; cache_control?: { type: 'ephemeral' } }
  | { type: 'image_url'; image_url: { url: string }; cache_control?: { type: 'ephemeral' } };

export type ChatMessage =
  | { role: 'system'; content: string | ChatPart[] }
  | { role: 'user'; content: string | ChatPart[] }
  | { role: 'assistant'; content: string | ChatPart[] | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string | ChatPart[] };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

function unsupported(what: string, field: string): ForkcacheError {
  return new ForkcacheError('INVALID_OPTION', `${field}: ${what} has no Chat Completions form`, { data: { field } });
}

/** DashScope's marker is only ever the 5-minute one; a `1h` request is sent as 5m there. */
function marked(block: unknown, dialect: ChatDialect): { cache_control?: { type: 'ephemeral' } } {
  return dialect.markers && (block as { cache_control?: unknown }).cache_control
    ? { cache_control: { type: 'ephemeral' } }
    : {};
}

/** A text or image block as a content part, its marker carried over where the dialect has markers. */
export function toPart(block: Block, dialect: ChatDialect, field: string): ChatPart {
  if (block.type === 'text') return { type: 'text', text: block.text, ...marked(block, dialect) };
  if (block.type === 'image' && block.source.type === 'base64') {
    return {
      type: 'image_url',
      image_url: { url: `data:${block.source.media_type};base64,${block.source.data}` },
      ...marked(block, dialect),
    };
  }
  if (block.type === 'image' && block.source.type === 'url')
    return { type: 'image_url', image_url: { url: block.source.url }, ...marked(block, dialect) };
  throw unsupported(`a "${block.type}" block`, field);
}

function resultText(content: Anthropic.ToolResultBlockParam['content']): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

/**
 * One Anthropic-shaped message as Chat Completions messages. A user turn splits: its tool
 * results become `tool` messages first (they must follow the assistant's calls), its other
 * blocks one `user` message. A marked tool result goes in array form, where DashScope reads
 * markers. Thinking blocks are dropped: Chat Completions has no place for them.
 */
export function toChatMessages(message: Message, dialect: ChatDialect, field: string): ChatMessage[] {
  if (typeof message.content === 'string') return [{ role: message.role, content: message.content }];
  const blocks = message.content;
  if (message.role === 'assistant') {
    const text = blocks.flatMap((b) => (b.type === 'text' ? [b] : []));
    const calls = blocks.flatMap((b, i): ChatToolCall[] => {
      if (b.type === 'tool_use')
        return [{ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }];
      if (b.type === 'text' || b.type === 'thinking' || b.type === 'redacted_thinking') return [];
      throw unsupported(`a "${b.type}" block`, `${field}.content[${i}]`);
    });
    const anyMarked = dialect.markers && text.some((b) => b.cache_control);
    const content =
      text.length === 0
        ? null
        : anyMarked
          ? text.map((b, i) => toPart(b, dialect, `${field}.content[${i}]`))
          : text.map((b) => b.text).join('');
    return [{ role: 'assistant', content, ...(calls.length > 0 ? { tool_calls: calls } : {}) }];
  }
  const out: ChatMessage[] = [];
  const parts: ChatPart[] = [];
  blocks.forEach((b, i) => {
    if (b.type === 'tool_result') {
      // Chat Completions has no error flag: a failed tool says so first, as Qwen Code's do
      const raw = resultText(b.content);
      const text = b.is_error && !/^\s*Error:/.test(raw) ? `Error: ${raw}` : raw;
      const mark = marked(b, dialect);
      out.push({
        role: 'tool',
        tool_call_id: b.tool_use_id,
        content: mark.cache_control ? [{ type: 'text', text, ...mark }] : text,
      });
    } else parts.push(toPart(b, dialect, `${field}.content[${i}]`));
  });
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

/** The parts a child appends to an open user message (its tail blocks). */
export function toParts(blocks: readonly Block[], dialect: ChatDialect, field: string): ChatPart[] {
  return blocks.map((b, i) => toPart(b, dialect, `${field}[${i}]`));
}
