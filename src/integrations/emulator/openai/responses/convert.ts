import type { MessagesRequest, RequestBlock, RequestMessage, ToolChoice, ToolDefinition } from '../../types.ts';
import { DEFAULT_MAX_TOKENS, parseArguments, TOOL_ERROR_PREFIX } from '../convert.ts';
import type { ResponsesItem, ResponsesPart, ResponsesRequest, ResponsesTool } from './schema.ts';

/*
 * Responses → the Messages shape the rest of the emulator speaks, as the Chat converter does:
 * `instructions` is the system prompt, every input item one message (or one block of the turn
 * it continues), each content part one block. A part's `prompt_cache_breakpoint` becomes the
 * block's `cache_control`: the cache renderer then reports it as a marked position, and the
 * marker never enters a key (moving a breakpoint changes no hash).
 */

const MARK = { type: 'ephemeral' } as const;

function partToBlock(part: ResponsesPart): RequestBlock {
  const mark = 'prompt_cache_breakpoint' in part && part.prompt_cache_breakpoint ? { cache_control: MARK } : {};
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text, ...mark };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    case 'input_image': {
      const { type: _type, prompt_cache_breakpoint: _mark, image_url: url, ...rest } = part;
      return { ...rest, type: 'image', source: { type: 'url', url: url ?? '' }, ...mark };
    }
    case 'input_file': {
      const { type: _type, prompt_cache_breakpoint: _mark, ...rest } = part;
      return { ...rest, type: 'document', ...mark };
    }
  }
}

function blocksOf(content: string | readonly ResponsesPart[]): RequestBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.map(partToBlock);
}

function textOf(content: string | readonly ResponsesPart[]): string {
  if (typeof content === 'string') return content;
  return blocksOf(content)
    .flatMap((b) => (b.type === 'text' ? [String(b['text'])] : []))
    .join('\n');
}

/** Append blocks to the last message when it is of `role` and `joins`, else start a new one. */
function pushBlocks(
  out: RequestMessage[],
  role: 'user' | 'assistant',
  blocks: RequestBlock[],
  joins: (last: RequestBlock[]) => boolean,
): void {
  const last = out[out.length - 1];
  if (last && last.role === role && Array.isArray(last.content) && joins(last.content)) last.content.push(...blocks);
  else out.push({ role, content: blocks });
}

function convertItems(items: readonly ResponsesItem[]): RequestMessage[] {
  const out: RequestMessage[] = [];
  for (const [index, item] of items.entries()) {
    if (item.type === 'function_call') {
      // the calls of one turn follow its assistant message (or each other): one assistant turn
      const block: RequestBlock = {
        type: 'tool_use',
        id: item.call_id,
        name: item.name,
        input: parseArguments(item.arguments, `input[${index}].arguments`),
      };
      pushBlocks(out, 'assistant', [block], () => true);
      continue;
    }
    if (item.type === 'function_call_output') {
      const text = textOf(item.output);
      const marked =
        Array.isArray(item.output) &&
        item.output.some((p) => 'prompt_cache_breakpoint' in p && p.prompt_cache_breakpoint);
      const block: RequestBlock = {
        type: 'tool_result',
        tool_use_id: item.call_id,
        content: text,
        ...(TOOL_ERROR_PREFIX.test(text) ? { is_error: true } : {}),
        ...(marked ? { cache_control: MARK } : {}),
      };
      pushBlocks(out, 'user', [block], (last) => last.every((b) => b.type === 'tool_result'));
      continue;
    }
    const role = item.role === 'assistant' ? 'assistant' : item.role === 'user' ? 'user' : 'system';
    out.push({ role, content: blocksOf(item.content) });
  }
  return out;
}

function convertTool(tool: ResponsesTool): ToolDefinition {
  return {
    name: tool.name,
    ...(tool.description == null ? {} : { description: tool.description }),
    input_schema: tool.parameters ?? { type: 'object', properties: {} },
  };
}

function convertToolChoice(choice: ResponsesRequest['tool_choice']): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  return { type: 'tool', name: choice.name };
}

/** The Messages-shaped view of a Responses request; `prewarm` asks for no output at all. */
export function toMessagesRequest(request: ResponsesRequest, prewarm: boolean): MessagesRequest {
  const toolChoice = convertToolChoice(request.tool_choice);
  const input = typeof request.input === 'string' ? [{ role: 'user' as const, content: request.input }] : request.input;
  return {
    model: request.model,
    max_tokens: prewarm ? 0 : (request.max_output_tokens ?? DEFAULT_MAX_TOKENS),
    messages: convertItems(input),
    ...(request.instructions ? { system: request.instructions } : {}),
    ...(request.tools && request.tools.length > 0 ? { tools: request.tools.map(convertTool) } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    stream: request.stream === true,
  };
}
