import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import type { ForkChild } from '../fork/layouts.ts';
import type { ResponsesCacheTtl } from '../wire/cache.ts';
import type { HeadEnd } from './sab.ts';
import type { SharedRequest } from './shared-request.ts';

type Block = Anthropic.ContentBlockParam;
type Message = Anthropic.MessageParam;

/** `prompt_cache_breakpoint` as openai-node types it: the exact end of a reusable prefix. */
const BREAKPOINT = { mode: 'explicit' } as const;

/** A Responses content part as forkcache writes it (key order fixed: the bytes are the cache key). */
type ResponsesPart =
  | { type: 'input_text'; text: string; prompt_cache_breakpoint?: typeof BREAKPOINT }
  | { type: 'output_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto'; prompt_cache_breakpoint?: typeof BREAKPOINT };

type ResponsesItem =
  | { role: 'system' | 'user'; content: string | ResponsesPart[] }
  | { role: 'assistant'; content: ResponsesPart[] }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | ResponsesPart[] };

/**
 * What every request of a Responses fan-out says about the cache, frozen in the head (so every
 * child sends the same bytes): the TTL of its writes, and `implicit` (one breakpoint on each
 * request's latest message, beside the head's explicit ones) or `explicit` (the head's
 * breakpoints only; none: nothing is cached, the `markers: 'none'` baseline).
 */
export interface ResponsesCacheOptions {
  mode: 'implicit' | 'explicit';
  ttl: ResponsesCacheTtl;
}

function unsupported(what: string, field: string): ForkcacheError {
  return new ForkcacheError('INVALID_OPTION', `${field}: ${what} has no Responses API form`, { data: { field } });
}

function toPart(block: Block, field: string): ResponsesPart {
  if (block.type === 'text') return { type: 'input_text', text: block.text };
  if (block.type === 'image' && block.source.type === 'base64')
    return {
      type: 'input_image',
      image_url: `data:${block.source.media_type};base64,${block.source.data}`,
      detail: 'auto',
    };
  if (block.type === 'image' && block.source.type === 'url')
    return { type: 'input_image', image_url: block.source.url, detail: 'auto' };
  throw unsupported(`a "${block.type}" block`, field);
}

function resultText(content: Anthropic.ToolResultBlockParam['content']): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

/**
 * One Anthropic-shaped message as Responses input items: an assistant turn is its text (one
 * message) then one `function_call` per tool call; a user turn its tool results
 * (`function_call_output`, which must follow the calls) then its other blocks as one message.
 * Thinking blocks are dropped, as on Chat Completions.
 */
function toResponsesItems(message: Message, field: string): ResponsesItem[] {
  if (typeof message.content === 'string') {
    return message.role === 'assistant'
      ? [{ role: 'assistant', content: [{ type: 'output_text', text: message.content }] }]
      : [{ role: 'user', content: message.content }];
  }
  const out: ResponsesItem[] = [];
  if (message.role === 'assistant') {
    const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    if (text !== '') out.push({ role: 'assistant', content: [{ type: 'output_text', text }] });
    message.content.forEach((b, i) => {
      if (b.type === 'tool_use')
        out.push({ type: 'function_call', call_id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) });
      else if (b.type !== 'text' && b.type !== 'thinking' && b.type !== 'redacted_thinking')
        throw unsupported(`a "${b.type}" block`, `${field}.content[${i}]`);
    });
    return out;
  }
  const parts: ResponsesPart[] = [];
  message.content.forEach((b, i) => {
    if (b.type === 'tool_result') {
      // no error flag on this API either: a failed tool says so first, as on Chat Completions
      const raw = resultText(b.content);
      const output = b.is_error && !/^\s*Error:/.test(raw) ? `Error: ${raw}` : raw;
      out.push({ type: 'function_call_output', call_id: b.tool_use_id, output });
    } else parts.push(toPart(b, `${field}.content[${i}]`));
  });
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

type Tool = Anthropic.ToolUnion;

/** Function tools in the Responses shape; `strict` is sent as declared, else `false` (the API's default is strict). */
function responsesTools(tools: readonly Tool[]): unknown[] {
  return tools.map((tool, i) => {
    if (!('input_schema' in tool))
      throw new ForkcacheError(
        'INVALID_OPTION',
        `snapshot.tools[${i}]: "${String((tool as { name?: unknown }).name ?? tool.type)}" is a server tool; the Responses API wire has only function tools`,
        { data: { field: `snapshot.tools[${i}]` } },
      );
    return {
      type: 'function',
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.input_schema,
      strict: typeof tool.strict === 'boolean' ? tool.strict : false,
    };
  });
}

function responsesToolChoice(choice: Anthropic.ToolChoice): unknown {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', name: choice.name };
  }
}

/**
 * Put a breakpoint on an item's last markable part: a tool result's output goes in array form
 * for it (the API takes both); false when there is none (a string message, a call).
 */
function markLast(item: ResponsesItem | undefined): boolean {
  if (item && 'type' in item && item.type === 'function_call_output') {
    const text = typeof item.output === 'string' ? item.output : '';
    if (typeof item.output === 'string')
      item.output = [{ type: 'input_text', text, prompt_cache_breakpoint: BREAKPOINT }];
    return typeof item.output !== 'string';
  }
  if (!item || !('role' in item) || item.role === 'assistant' || !Array.isArray(item.content)) return false;
  const last = item.content.at(-1);
  if (!last || last.type === 'output_text') return false;
  item.content[item.content.length - 1] = { ...last, prompt_cache_breakpoint: BREAKPOINT };
  return true;
}

/** The `"prompt_cache_options":{…}` member of a head, as rendered (the warm-up swaps it for its prewarm). */
export function cacheOptionsMember(options: ResponsesCacheOptions, extra: { prewarm?: true } = {}): string {
  return `"prompt_cache_options":${JSON.stringify({ ...options, ...extra })}`;
}

/**
 * The frozen head of a Responses fan-out: `{"model":…,"prompt_cache_options":{…},"tools":[…],
 * <settings>,"input":[system, …shared…` cut where a child continues. The system prompt is the
 * first input item in array form (not `instructions`, a string that cannot hold a breakpoint).
 * With breakpoints on (`markers: 'boundary'`), the system item's last part and the shared
 * boundary's last part carry `prompt_cache_breakpoint`: the two prefixes siblings and the
 * parent's later requests read, exactly (a breakpoint is not rounded to a token block).
 */
export function renderResponsesHead(
  shared: SharedRequest,
  options: { cache: ResponsesCacheOptions; breakpoints: boolean },
): { text: string; headEnd: HeadEnd } {
  const source = shared.object as Record<string, unknown>;
  const object: Record<string, unknown> = { model: source['model'] };
  object['prompt_cache_options'] = options.cache;
  const tools = source['tools'] as Tool[] | undefined;
  if (tools && tools.length > 0) object['tools'] = responsesTools(tools);
  if (source['tool_choice'] !== undefined)
    object['tool_choice'] = responsesToolChoice(source['tool_choice'] as Anthropic.ToolChoice);
  for (const key of ['temperature', 'top_p'] as const) if (source[key] !== undefined) object[key] = source[key];
  const items: ResponsesItem[] = [];
  const system = source['system'] as string | Anthropic.TextBlockParam[] | undefined;
  if (system !== undefined && system !== '' && !(Array.isArray(system) && system.length === 0)) {
    const blocks = typeof system === 'string' ? [{ text: system }] : system;
    items.push({ role: 'system', content: blocks.map((b) => ({ type: 'input_text', text: b.text })) });
    if (options.breakpoints) markLast(items[0]);
  }
  const messages = source['messages'] as Anthropic.MessageParam[];
  messages.forEach((m, i) => items.push(...toResponsesItems(m, `snapshot.messages[${i}]`)));
  if (options.breakpoints && messages.length > 0) markLast(items.at(-1));
  object['input'] = items;
  const json = JSON.stringify(object);
  const last = items.at(-1);
  // a child continues the boundary item only when it is a user message in array form
  const [tail, headEnd]: [string, HeadEnd] = !last
    ? [']}', 'messages-open']
    : messages.length > 0 && 'role' in last && last.role === 'user' && Array.isArray(last.content)
      ? [']}]}', 'content-open']
      : [']}', 'message-closed'];
  if (!json.endsWith(tail)) throw new ForkcacheError('INTERNAL', `responses head JSON does not end with ${tail}`);
  return { text: json.slice(0, json.length - tail.length), headEnd };
}

/**
 * What follows the head for one child: its tail parts (appended to the open user message, or
 * as a new user message after a closed one), its own turns as items, then the per-request
 * fields. A child's own blocks carry no breakpoint: the implicit one covers its latest message.
 */
export function serializeResponsesSuffix(
  headEnd: HeadEnd,
  child: ForkChild,
  perRequest: Readonly<Record<string, unknown>>,
): string {
  let out = '';
  const items: ResponsesItem[] = [];
  const parts = child.tailBlocks.map((b, i) => toPart(b, `child.tailBlocks[${i}]`));
  if (headEnd === 'content-open') {
    for (const part of parts) out += `,${JSON.stringify(part)}`;
    out += ']}';
  } else if (parts.length > 0) {
    items.push({ role: 'user', content: parts });
  }
  child.messages.forEach((m, i) => items.push(...toResponsesItems(m, `child.messages[${i}]`)));
  items.forEach((m, i) => (out += `${i === 0 && headEnd === 'messages-open' ? '' : ','}${JSON.stringify(m)}`));
  out += ']';
  for (const [key, value] of Object.entries(perRequest))
    if (value !== undefined) out += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return `${out}}`;
}
