import { invalidRequest } from '../api-error.ts';
import { mergedTurns } from '../../../core/wire/turns.ts';
import type { MessagesRequest, RequestBlock, RequestMessage } from '../types.ts';

/** API versions the emulator accepts (the SDK 0.x and 1.x defaults, and the oldest). */
export const API_VERSIONS = ['2023-01-01', '2023-06-01', '2026-10-21'] as const;

/** From this version on, sampling parameters are rejected (see the API facts). */
const NO_SAMPLING_FROM = '2026-10-21';

interface SemanticOptions {
  apiVersion: string;
  /** count_tokens takes the same inputs minus max_tokens and stream. */
  countTokens?: boolean;
}

function blocksOf(message: RequestMessage): RequestBlock[] {
  return typeof message.content === 'string' || message.content === undefined ? [] : message.content;
}

function isEmptyContent(message: RequestMessage): boolean {
  if (message.content === undefined) return true;
  return typeof message.content === 'string' ? message.content === '' : message.content.length === 0;
}

/*
 * System turns (GA 2026-10-21): never first (that is the top-level `system`), and they sit
 * between a user turn and the assistant turn that answers it, which is where clients put them
 * (Claude Code: last, after the user's turn). The wording is the API's, which clients match to
 * decide whether to fall back to a top-level system prompt.
 */
function checkSystemTurns(messages: readonly RequestMessage[]): void {
  messages.forEach((message, i) => {
    if (message.role !== 'system') return;
    if (i === 0) throw invalidRequest('messages.0: use the top-level "system" parameter for the initial system prompt');
    if (messages[i - 1]!.role !== 'user')
      throw invalidRequest(`messages.${i}: role "system" must follow a user message`);
    const next = messages[i + 1];
    if (next && next.role !== 'assistant')
      throw invalidRequest(`messages.${i}: role "system" must precede an assistant message`);
    if (isEmptyContent(message) && message.output_config == null) {
      throw invalidRequest(`messages.${i}: a system message needs content or output_config`);
    }
  });
}

// Consecutive messages of one role are combined into one turn, as the API does: only the first
// turn's role is checked here (tool pairing is checked on the combined turns).
function checkRoles(messages: readonly RequestMessage[]): void {
  checkSystemTurns(messages);
  if (messages[0]?.role !== 'user') throw invalidRequest('messages: first message must use the "user" role');
}

function checkBlocks(messages: readonly RequestMessage[]): void {
  messages.forEach((message, i) => {
    const last = i === messages.length - 1;
    if (message.role !== 'system' && isEmptyContent(message) && !(last && message.role === 'assistant')) {
      throw invalidRequest(
        `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    blocksOf(message).forEach((block, j) => {
      const at = `messages.${i}.content.${j}`;
      if (block.type === 'text' && block['text'] === '')
        throw invalidRequest(`${at}.text: text content blocks must be non-empty`);
      if (block.type === 'tool_use' && message.role !== 'assistant')
        throw invalidRequest(`${at}: tool_use blocks can only appear in assistant messages`);
      if (block.type === 'tool_result' && message.role !== 'user')
        throw invalidRequest(`${at}: tool_result blocks can only appear in user messages`);
      if ((block.type === 'thinking' || block.type === 'redacted_thinking') && block.cache_control != null) {
        throw invalidRequest(`${at}.cache_control: cache_control cannot be set on ${block.type} blocks`);
      }
    });
  });
  const final = messages[messages.length - 1];
  if (final?.role === 'assistant') {
    const blocks = typeof final.content === 'string' ? [{ type: 'text', text: final.content }] : final.content;
    const tail = blocks[blocks.length - 1];
    if (tail?.type === 'text' && typeof tail['text'] === 'string' && /\s$/.test(tail['text'])) {
      throw invalidRequest('messages: final assistant content cannot end with trailing whitespace');
    }
  }
}

// Every tool_use is answered in the very next turn, and every tool_result answers a tool_use of
// the turn right before it: the API rejects both dangling halves. A turn is consecutive
// messages of one role, combined (system turns apart).
function checkToolPairing(messages: readonly RequestMessage[]): void {
  const seen = new Set<string>();
  const turns = mergedTurns(messages).filter((t) => t.role !== 'system');
  turns.forEach((turn, t) => {
    const first = turn.messages[0]!;
    if (turn.role === 'assistant') {
      const ids = turn.blocks.filter((b) => b.block.type === 'tool_use').map((b) => String(b.block['id']));
      for (const id of ids) {
        if (seen.has(id)) throw invalidRequest(`messages.${first}: \`tool_use\` ids must be unique, found ${id} twice`);
        seen.add(id);
      }
      const next = turns[t + 1];
      const answered = new Set(
        (next?.blocks ?? []).filter((b) => b.block.type === 'tool_result').map((b) => String(b.block['tool_use_id'])),
      );
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        throw invalidRequest(
          `messages.${first}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
      return;
    }
    const previous = turns[t - 1];
    const asked = new Set(
      previous?.role === 'assistant'
        ? previous.blocks.filter((b) => b.block.type === 'tool_use').map((b) => String(b.block['id']))
        : [],
    );
    for (const { block, message, index } of turn.blocks) {
      if (block.type !== 'tool_result') continue;
      const id = String(block['tool_use_id']);
      if (!asked.has(id)) {
        throw invalidRequest(
          `messages.${message}.content.${index}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
  });
}

function checkTools(req: MessagesRequest): void {
  const names = (req.tools ?? []).map((t) => t.name);
  if (new Set(names).size !== names.length) throw invalidRequest('tools: Tool names must be unique.');
  const choice = req.tool_choice;
  if (choice && (choice.type === 'any' || choice.type === 'tool') && names.length === 0) {
    throw invalidRequest(`tool_choice: tool_choice.type "${choice.type}" requires tools to be provided`);
  }
  if (choice?.type === 'tool' && !names.includes(choice.name ?? '')) {
    throw invalidRequest(`tool_choice.name: tool "${choice.name}" is not one of the provided tools`);
  }
}

function checkGeneration(req: MessagesRequest, options: SemanticOptions): void {
  if (options.apiVersion >= NO_SAMPLING_FROM) {
    for (const field of ['temperature', 'top_p', 'top_k'] as const) {
      if (req[field] !== undefined)
        throw invalidRequest(`${field}: not supported with anthropic-version ${options.apiVersion}`);
    }
  }
  const forced = req.tool_choice?.type === 'any' || req.tool_choice?.type === 'tool';
  const thinking = req.thinking !== undefined && req.thinking.type !== 'disabled';
  if (thinking && forced) throw invalidRequest('Thinking may not be enabled when tool_choice forces tool use.');
  if (options.countTokens) return;
  // max_tokens: 0 is the pre-warm: it produces nothing, so nothing may require output.
  if (req.max_tokens === 0) {
    if (req.stream === true) throw invalidRequest('max_tokens: 0 is not supported with stream: true');
    if (thinking) throw invalidRequest('max_tokens: 0 is not supported with thinking enabled');
    if (forced) throw invalidRequest(`max_tokens: 0 is not supported with tool_choice "${req.tool_choice!.type}"`);
  }
  const budget = req.thinking?.type === 'enabled' ? (req.thinking.budget_tokens ?? 0) : 0;
  if (budget > 0 && req.max_tokens > 0 && budget >= req.max_tokens) {
    throw invalidRequest('max_tokens: must be greater than thinking.budget_tokens');
  }
}

/**
 * The checks the API makes beyond the JSON shape: role order, tool_use/tool_result pairing,
 * non-empty content, tool names, and the `max_tokens: 0` restrictions. Cache markers are
 * checked where they are collected (`cache/markers.ts`). Throws an ApiError (400).
 */
export function validateSemantics(req: MessagesRequest, options: SemanticOptions): void {
  checkGeneration(req, options);
  checkRoles(req.messages);
  checkBlocks(req.messages);
  if (Array.isArray(req.system)) {
    req.system.forEach((block, i) => {
      if (block.text === '') throw invalidRequest(`system.${i}.text: text content blocks must be non-empty`);
    });
  }
  checkToolPairing(req.messages);
  checkTools(req);
}
