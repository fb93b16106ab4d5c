import { DIRECTIVE_PREFIX, FORK_BOILERPLATE_CLOSE, FORK_BOILERPLATE_OPEN } from '../../../core/wire/fork-text.ts';
import type { MessagesRequest, RequestBlock, RequestMessage } from '../types.ts';

/*
 * Reading a conversation the way a stateless scripted model needs to: which directive it was
 * given, which tools it called after that, and what came back.
 */

/** A message's content as blocks (a string is one text block). */
export function blocksOf(message: RequestMessage): RequestBlock[] {
  // A system turn may carry only output_config (no content).
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content ?? []);
}

/**
 * Clients' injected context, not the user's words: Claude Code opens a user turn with
 * `<system-reminder>` blocks ahead of what the user typed.
 */
export function isSystemReminder(text: string): boolean {
  return text.trimStart().startsWith('<system-reminder>');
}

/** The text blocks of a message, joined by newlines (tool results and system reminders excluded). */
function textOf(message: RequestMessage): string {
  return blocksOf(message)
    .filter((b) => b.type === 'text' && !isSystemReminder(String(b['text'])))
    .map((b) => String(b['text']))
    .join('\n');
}

/** The text of a tool_result block's content. */
function toolResultText(block: RequestBlock): string {
  const content = block['content'];
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as RequestBlock[])
    .filter((b) => b.type === 'text')
    .map((b) => String(b['text']))
    .join('\n');
}

/** The last user message that carries text of its own, with its index. */
export function lastUserText(
  messages: readonly RequestMessage[],
  accept: (text: string) => boolean = () => true,
): { text: string; message: number } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'user') continue;
    const text = textOf(message);
    if (text.trim() !== '' && accept(text)) return { text, message: i };
  }
  return undefined;
}

/**
 * The directive of a fork child: the last user text that contains the boilerplate tag, read
 * after the closing tag and `Directive: `. Undefined for a parent (no tag anywhere).
 */
export function findForkDirective(
  messages: readonly RequestMessage[],
): { directive: string; message: number } | undefined {
  const found = lastUserText(messages, (text) => text.includes(FORK_BOILERPLATE_OPEN));
  if (!found) return undefined;
  const close = found.text.lastIndexOf(FORK_BOILERPLATE_CLOSE);
  const rest = close >= 0 ? found.text.slice(close + FORK_BOILERPLATE_CLOSE.length) : found.text;
  const at = rest.lastIndexOf(DIRECTIVE_PREFIX);
  const directive = at >= 0 ? rest.slice(at + DIRECTIVE_PREFIX.length) : rest;
  return { directive: directive.trim(), message: found.message };
}

export interface ToolExchange {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Index of the assistant message that made the call. */
  message: number;
  /** Undefined while unanswered (only possible for the last assistant message). */
  result: { text: string; isError: boolean } | undefined;
}

/** Every tool call made after message `from`, in order, paired with its result. */
export function toolExchanges(messages: readonly RequestMessage[], from = 0): ToolExchange[] {
  const out: ToolExchange[] = [];
  for (let i = Math.max(0, from); i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const results = messages[i + 1] ? blocksOf(messages[i + 1]!).filter((b) => b.type === 'tool_result') : [];
    for (const block of blocksOf(message)) {
      if (block.type !== 'tool_use') continue;
      const answer = results.find((r) => r['tool_use_id'] === block['id']);
      out.push({
        id: String(block['id']),
        name: String(block['name']),
        input: (block['input'] ?? {}) as Record<string, unknown>,
        message: i,
        result: answer && { text: toolResultText(answer), isError: answer['is_error'] === true },
      });
    }
  }
  return out;
}

/** Names of the tools a request declares. */
export function declaredTools(request: Readonly<MessagesRequest>): Set<string> {
  return new Set((request.tools ?? []).map((t) => t.name));
}

/** User texts after message `from` (e.g. task notifications that arrived later). */
export function userTextsAfter(messages: readonly RequestMessage[], from: number): string[] {
  return messages
    .slice(from + 1)
    .filter((m) => m.role === 'user')
    .map(textOf)
    .filter((t) => t.trim() !== '');
}
