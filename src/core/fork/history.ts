import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import { mergedTurns, type Turn, type TurnBlock } from '../wire/turns.ts';

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

interface HistoryCheckOptions {
  /**
   * Allow the last message to be an assistant message with unanswered `tool_use` blocks:
   * those are the spawn calls, and the fork builder answers each with a placeholder.
   */
  allowDanglingAtEnd: boolean;
}

/**
 * The structural rules the API enforces on a history, checked before anything is frozen so a
 * bad parent fails here with a path, not as a 400 from every child: the first turn is the
 * user's, every `tool_result` answers a `tool_use` of the turn right before it, and no
 * `tool_use` is left unanswered. Consecutive messages of one role are one turn, as the API
 * combines them (a Claude Code session may hold two user records in a row); system turns sit
 * between the others without taking part in pairing.
 */
export function checkHistory(all: readonly Anthropic.MessageParam[], options: HistoryCheckOptions): void {
  const turns = mergedTurns(all).filter((t) => t.role !== 'system');
  if (turns.length > 0 && turns[0]!.role !== 'user')
    fail(`messages[${turns[0]!.messages[0]}].role`, 'the first message must have role "user"');
  const at = (b: TurnBlock): string => `messages[${b.message}].content[${b.index}]`;
  turns.forEach((turn, i) => {
    const uses = turn.blocks.filter((b) => b.block.type === 'tool_use');
    const ids = new Set<string>();
    for (const use of uses) {
      if (turn.role !== 'assistant') fail(at(use), 'tool_use blocks belong in assistant messages');
      const id = String(use.block['id']);
      if (ids.has(id)) fail(`${at(use)}.id`, `duplicate tool_use id "${id}"`);
      ids.add(id);
    }
    checkResults(turn, turns[i - 1], at);
    const next = turns[i + 1];
    const last = i === turns.length - 1;
    if (uses.length > 0 && !(last && options.allowDanglingAtEnd)) {
      const answered = new Set(next ? resultIdsOf(next) : []);
      for (const use of uses) {
        if (!answered.has(String(use.block['id']))) {
          fail(
            at(use),
            `tool_use "${String(use.block['id'])}" has no tool_result in messages[${next?.messages[0] ?? all.length}]`,
          );
        }
      }
    }
  });
}

function resultIdsOf(turn: Turn): string[] {
  return turn.blocks.flatMap((b) => (b.block.type === 'tool_result' ? [String(b.block['tool_use_id'])] : []));
}

function checkResults(turn: Turn, previous: Turn | undefined, at: (b: TurnBlock) => string): void {
  const offered = new Set(
    previous && previous.role === 'assistant'
      ? previous.blocks.filter((b) => b.block.type === 'tool_use').map((b) => String(b.block['id']))
      : [],
  );
  const seen = new Set<string>();
  for (const result of turn.blocks) {
    if (result.block.type !== 'tool_result') continue;
    const id = String(result.block['tool_use_id']);
    const path = `${at(result)}.tool_use_id`;
    if (turn.role !== 'user') fail(at(result), 'tool_result blocks belong in user messages');
    if (!offered.has(id))
      fail(path, `no tool_use "${id}" in messages[${previous?.messages.at(-1) ?? result.message - 1}]`);
    if (seen.has(id)) fail(path, `tool_use "${id}" answered twice`);
    seen.add(id);
  }
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
