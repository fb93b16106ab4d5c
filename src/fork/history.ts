import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../errors.ts';

type Block = Anthropic.ContentBlockParam;

/** A message's content as blocks (a string is one text block, as the API renders it). */
export function blocksOf(message: Anthropic.MessageParam): Block[] {
  return typeof message.content === 'string'
    ? [{ type: 'text', text: message.content }]
    : [...(message.content as Block[])];
}

/** The `tool_use` blocks of a message, with their positions. */
export function toolUsesOf(message: Anthropic.MessageParam): { block: Anthropic.ToolUseBlockParam; index: number }[] {
  const out: { block: Anthropic.ToolUseBlockParam; index: number }[] = [];
  blocksOf(message).forEach((block, index) => {
    if (block.type === 'tool_use') out.push({ block, index });
  });
  return out;
}

function fail(path: string, message: string): never {
  throw new ForkcacheError('SNAPSHOT_INVALID', `snapshot: ${path}: ${message}`, { data: { path } });
}

export interface HistoryCheckOptions {
  /**
   * Allow the last message to be an assistant message with unanswered `tool_use` blocks:
   * those are the spawn calls, and the fork builder answers each with a placeholder.
   */
  allowDanglingAtEnd: boolean;
}

/**
 * The structural rules the API enforces on a history, checked before anything is frozen so a
 * bad parent fails here with a path, not as a 400 from every child: the first message is the
 * user's, roles alternate, every `tool_result` answers a `tool_use` of the message right
 * before it, and no `tool_use` is left unanswered.
 */
export function checkHistory(all: readonly Anthropic.MessageParam[], options: HistoryCheckOptions): void {
  // System turns sit between the others without taking part in alternation or tool pairing.
  const messages = all.filter((m) => (m.role as string) !== 'system');
  const at = all.flatMap((m, i) => ((m.role as string) === 'system' ? [] : [i]));
  if (messages.length > 0 && messages[0]!.role !== 'user')
    fail(`messages[${at[0]}].role`, 'the first message must have role "user"');
  messages.forEach((message, i) => {
    const previous = messages[i - 1];
    if (previous && previous.role === message.role) {
      fail(`messages[${at[i]}].role`, `roles must alternate; messages[${at[i - 1]}] is also "${message.role}"`);
    }
    const uses = toolUsesOf(message);
    const ids = new Set<string>();
    for (const { block, index } of uses) {
      if (message.role !== 'assistant')
        fail(`messages[${at[i]}].content[${index}]`, 'tool_use blocks belong in assistant messages');
      if (ids.has(block.id)) fail(`messages[${at[i]}].content[${index}].id`, `duplicate tool_use id "${block.id}"`);
      ids.add(block.id);
    }
    checkResults(message, at[i]!, previous);
    const next = messages[i + 1];
    const last = i === messages.length - 1;
    if (uses.length > 0 && !(last && options.allowDanglingAtEnd)) {
      const answered = new Set(next ? resultIdsOf(next) : []);
      for (const { block, index } of uses) {
        if (!answered.has(block.id)) {
          fail(
            `messages[${at[i]}].content[${index}]`,
            `tool_use "${block.id}" has no tool_result in messages[${at[i + 1] ?? all.length}]`,
          );
        }
      }
    }
  });
}

function resultIdsOf(message: Anthropic.MessageParam): string[] {
  return blocksOf(message).flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : []));
}

function checkResults(message: Anthropic.MessageParam, i: number, previous: Anthropic.MessageParam | undefined): void {
  const offered = new Set(previous && previous.role === 'assistant' ? toolUsesOf(previous).map((u) => u.block.id) : []);
  const seen = new Set<string>();
  blocksOf(message).forEach((block, index) => {
    if (block.type !== 'tool_result') return;
    const path = `messages[${i}].content[${index}].tool_use_id`;
    if (message.role !== 'user') fail(`messages[${i}].content[${index}]`, 'tool_result blocks belong in user messages');
    if (!offered.has(block.tool_use_id)) fail(path, `no tool_use "${block.tool_use_id}" in messages[${i - 1}]`);
    if (seen.has(block.tool_use_id)) fail(path, `tool_use "${block.tool_use_id}" answered twice`);
    seen.add(block.tool_use_id);
  });
}

/** Where a cache marker sits in a request, as a path (`tools[2]`, `system[0]`, `messages[4].content[1]`). */
export function markerPaths(request: {
  system?: unknown;
  tools?: readonly unknown[] | undefined;
  messages: readonly Anthropic.MessageParam[];
}): string[] {
  const has = (x: unknown): boolean =>
    typeof x === 'object' && x !== null && (x as { cache_control?: unknown }).cache_control != null;
  const paths: string[] = [];
  request.tools?.forEach((tool, i) => has(tool) && paths.push(`tools[${i}]`));
  if (Array.isArray(request.system)) request.system.forEach((block, i) => has(block) && paths.push(`system[${i}]`));
  request.messages.forEach((message, i) => {
    if (typeof message.content !== 'string')
      message.content.forEach((block, j) => has(block) && paths.push(`messages[${i}].content[${j}]`));
  });
  return paths;
}
