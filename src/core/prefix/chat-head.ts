import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import type { ForkChild, ForkLayout } from '../fork/layouts.ts';
import type { HeadEnd } from './sab.ts';
import type { SharedRequest } from './shared-request.ts';
import { type ChatMessage, type ChatPart, toChatMessages, toPart, toParts } from './chat-messages.ts';
import type { ChatDialect } from '../wire/chat-dialect.ts';

type Tool = Anthropic.ToolUnion;

export function chatTools(tools: readonly Tool[], markLast: boolean): unknown[] {
  return tools.map((tool, i) => {
    if (!('input_schema' in tool)) {
      throw new ForkcacheError(
        'INVALID_OPTION',
        `snapshot.tools[${i}]: "${String((tool as { name?: unknown }).name ?? tool.type)}" is a server tool; Chat Completions has only function tools`,
        { data: { field: `snapshot.tools[${i}]` } },
      );
    }
    const fn = {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.input_schema,
      // an app's strict function tool (the AI SDK's `strict: true`) is sent as it declared it
      ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
    };
    return {
      type: 'function',
      function: fn,
      ...(markLast && i === tools.length - 1 ? { cache_control: { type: 'ephemeral' } } : {}),
    };
  });
}

export function chatToolChoice(choice: Anthropic.ToolChoice): unknown {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

export function systemMessage(
  system: string | readonly Anthropic.TextBlockParam[],
  dialect: ChatDialect,
  mark: boolean,
): ChatMessage {
  if (!mark) {
    if (typeof system === 'string') return { role: 'system', content: system };
    return {
      role: 'system',
      content: system.map((b, i) => toPart({ type: 'text', text: b.text }, dialect, `snapshot.system[${i}]`)),
    };
  }
  // Qwen Code's own placement: the system message in array form, marked (the stable prefix)
  const blocks = typeof system === 'string' ? [{ type: 'text' as const, text: system }] : system;
  const parts: ChatPart[] = blocks.map((b) => ({ type: 'text', text: b.text }));
  parts[parts.length - 1] = { ...parts.at(-1)!, cache_control: { type: 'ephemeral' } };
  return { role: 'system', content: parts };
}

interface ChatHeadOptions {
  dialect: ChatDialect;
  layout: ForkLayout;
}

/**
 * The frozen head of a Chat Completions fan-out, rendered once from the provider-neutral
 * shared request: `{"model":…,"tools":[…],<settings>,"messages":[system, …shared…` cut where
 * a child continues. Settings Chat Completions has no field for (thinking, top_k, metadata,
 * output_config) are not sent. On DashScope the system message carries a marker, the shared
 * boundary keeps its own (reads only find what a marker wrote), and with the qwen layout the
 * last tool is marked too, as Qwen Code does (DashScope ignores it; it costs nothing).
 */
export function renderChatHead(shared: SharedRequest, options: ChatHeadOptions): { text: string; headEnd: HeadEnd } {
  const { dialect } = options;
  const source = shared.object as Record<string, unknown>;
  const cached = dialect.markers && shared.markers.length > 0;
  const object: Record<string, unknown> = { model: source['model'] };
  const tools = source['tools'] as Tool[] | undefined;
  if (tools && tools.length > 0) object['tools'] = chatTools(tools, cached && options.layout === 'qwen');
  if (source['tool_choice'] !== undefined)
    object['tool_choice'] = chatToolChoice(source['tool_choice'] as Anthropic.ToolChoice);
  for (const key of ['temperature', 'top_p'] as const) if (source[key] !== undefined) object[key] = source[key];
  const messages: ChatMessage[] = [];
  const system = source['system'] as string | Anthropic.TextBlockParam[] | undefined;
  if (system !== undefined && system !== '' && !(Array.isArray(system) && system.length === 0))
    messages.push(systemMessage(system, dialect, cached));
  (source['messages'] as Anthropic.MessageParam[]).forEach((m, i) =>
    messages.push(...toChatMessages(m, dialect, `snapshot.messages[${i}]`)),
  );
  object['messages'] = messages;
  const json = JSON.stringify(object);
  const last = messages.at(-1);
  const history = (source['messages'] as unknown[]).length > 0;
  // a child continues the boundary message only when it is a user message in array form
  const [tail, headEnd]: [string, HeadEnd] = !last
    ? [']}', 'messages-open']
    : history && last.role === 'user' && Array.isArray(last.content)
      ? [']}]}', 'content-open']
      : [']}', 'message-closed'];
  if (!json.endsWith(tail)) throw new ForkcacheError('INTERNAL', `chat head JSON does not end with ${tail}`);
  return { text: json.slice(0, json.length - tail.length), headEnd };
}

/**
 * What follows the head for one child: its tail parts (appended to the open user message, or
 * as a new user message after a closed one), its own turns, then the per-request fields.
 */
export function serializeChatSuffix(
  headEnd: HeadEnd,
  child: ForkChild,
  perRequest: Readonly<Record<string, unknown>>,
  dialect: ChatDialect,
): string {
  let out = '';
  const messages: ChatMessage[] = [];
  if (headEnd === 'content-open') {
    for (const part of toParts(child.tailBlocks, dialect, 'child.tailBlocks')) out += `,${JSON.stringify(part)}`;
    out += ']}';
  } else if (child.tailBlocks.length > 0) {
    messages.push({ role: 'user', content: toParts(child.tailBlocks, dialect, 'child.tailBlocks') });
  }
  child.messages.forEach((m, i) => messages.push(...toChatMessages(m, dialect, `child.messages[${i}]`)));
  messages.forEach((m, i) => (out += `${i === 0 && headEnd === 'messages-open' ? '' : ','}${JSON.stringify(m)}`));
  out += ']';
  for (const [key, value] of Object.entries(perRequest))
    if (value !== undefined) out += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return `${out}}`;
}
