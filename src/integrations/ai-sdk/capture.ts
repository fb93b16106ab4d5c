import type Anthropic from '@anthropic-ai/sdk';
import { assistantBlocks, type ChatAssistantMessage } from '../../core/fork/chat-request.ts';
import { type ChatUsage, fromChatUsage } from '../../core/ledger/chat-usage.ts';
import type { UsageInput } from '../../core/ledger/usage.ts';

/** The API an exchange spoke: the Messages API, or Chat Completions (OpenAI and the compatible providers). */
export type CapturedWire = 'messages' | 'chat';

/** One request the app sent through the wrapped fetch, and what came back. */
export interface CapturedExchange {
  readonly wire: CapturedWire;
  /** The request body exactly as sent. */
  readonly body: string;
  /** The request's headers that change what the model does (`MODEL_HEADERS`): the children send them too. */
  readonly headers: Readonly<Record<string, string>>;
  readonly request: Record<string, unknown>;
  /** The assistant turn of the response, as Messages content blocks (a Chat message's text and calls), once read. */
  assistant: Anthropic.ContentBlockParam[];
  /** A Chat response's message as it came (the children's parent turn is built from it). */
  chatMessage?: ChatAssistantMessage;
  usage: UsageInput | undefined;
  /** Settles when the response has been read to its end (or could not be). */
  readonly done: Promise<void>;
}

type Fetch = typeof globalThis.fetch;

/**
 * Headers of the app's request that change what the model does: `anthropic-beta` (the betas
 * `@ai-sdk/anthropic` sends for the app's provider options, and those of its `headers`). The
 * children's requests carry them as the app's did; credentials and the rest stay the engine's.
 */
const MODEL_HEADERS = ['anthropic-beta'] as const;

function modelHeadersOf(init: RequestInit | undefined): Record<string, string> {
  const headers = new Headers(init?.headers);
  const out: Record<string, string> = {};
  for (const name of MODEL_HEADERS) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

function wireOf(url: string, init: RequestInit | undefined): CapturedWire | undefined {
  if ((init?.method ?? 'GET').toUpperCase() !== 'POST' || typeof init?.body !== 'string') return undefined;
  const path = url.split('?')[0]!;
  if (path.endsWith('/messages')) return 'messages';
  if (path.endsWith('/chat/completions')) return 'chat';
  return undefined;
}

/**
 * The app's provider `fetch`, wrapped: every Messages or Chat Completions request is kept with
 * its exact body, and its response is read on a copy (the app gets the upstream's bytes
 * untouched) for the assistant turn and the usage. A fork tool then forks from the request whose response called it.
 */
export class RequestCapture {
  readonly #fetch: Fetch;
  readonly #exchanges: CapturedExchange[] = [];
  readonly #onUsage: (exchange: CapturedExchange) => void;
  /** Exchanges kept at most (the oldest are dropped: a long conversation keeps only its recent requests). */
  readonly #keep: number;

  constructor(fetch: Fetch, onUsage: (exchange: CapturedExchange) => void, keep = 32) {
    this.#fetch = fetch;
    this.#onUsage = onUsage;
    this.#keep = keep;
  }

  readonly fetch: Fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const response = await this.#fetch(input, init);
    const wire = wireOf(url, init);
    if (!wire || !response.ok) return response;
    const body = init!.body as string;
    let request: Record<string, unknown>;
    try {
      request = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return response;
    }
    const exchange: { -readonly [K in keyof CapturedExchange]: CapturedExchange[K] } = {
      wire,
      body,
      headers: modelHeadersOf(init),
      request,
      assistant: [],
      usage: undefined,
      done: Promise.resolve(),
    };
    exchange.done = (wire === 'chat' ? readChatResponse : readResponse)(response.clone(), exchange).then(
      () => this.#onUsage(exchange),
      () => undefined,
    );
    this.#exchanges.push(exchange);
    if (this.#exchanges.length > this.#keep) this.#exchanges.shift();
    return response;
  };

  /** The exchange whose response holds the tool call `toolCallId` (waits for responses still being read). */
  async find(toolCallId: string): Promise<CapturedExchange | undefined> {
    for (let i = this.#exchanges.length - 1; i >= 0; i--) {
      const exchange = this.#exchanges[i]!;
      await exchange.done;
      if (exchange.assistant.some((b) => b.type === 'tool_use' && b.id === toolCallId)) return exchange;
    }
    return undefined;
  }
}

type Block = Record<string, unknown> & { type: string };

/** The assistant turn and usage of a Messages response: a JSON body, or an SSE stream accumulated. */
async function readResponse(
  response: Response,
  into: { assistant: Anthropic.ContentBlockParam[]; usage: UsageInput | undefined },
): Promise<void> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const message = JSON.parse(text) as { content?: Block[]; usage?: Anthropic.Usage };
    into.assistant = (message.content ?? []).map(requestBlock);
    into.usage = message.usage;
    return;
  }
  const blocks: Block[] = [];
  const partialJson = new Map<number, string>();
  let usage: Record<string, unknown> | undefined;
  for (const frame of text.split(/\r?\n\r?\n/)) {
    const data = frame
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data === '') continue;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- SSE events of every shape, read field by field
    const event = JSON.parse(data) as Record<string, any>;
    switch (event['type']) {
      case 'message_start':
        usage = { ...(event['message']?.usage ?? {}) };
        break;
      case 'content_block_start':
        blocks[event['index']] = { ...event['content_block'] };
        if (event['content_block']?.type === 'tool_use') partialJson.set(event['index'], '');
        break;
      case 'content_block_delta': {
        const block = blocks[event['index']];
        const delta = event['delta'] ?? {};
        if (!block) break;
        if (delta.type === 'text_delta') block['text'] = `${String(block['text'] ?? '')}${delta.text}`;
        else if (delta.type === 'thinking_delta')
          block['thinking'] = `${String(block['thinking'] ?? '')}${delta.thinking}`;
        else if (delta.type === 'signature_delta')
          block['signature'] = `${String(block['signature'] ?? '')}${delta.signature}`;
        else if (delta.type === 'input_json_delta')
          partialJson.set(event['index'], `${partialJson.get(event['index']) ?? ''}${delta.partial_json}`);
        break;
      }
      case 'content_block_stop': {
        const json = partialJson.get(event['index']);
        const block = blocks[event['index']];
        if (block && json !== undefined) block['input'] = json === '' ? {} : JSON.parse(json);
        break;
      }
      case 'message_delta':
        usage = { ...usage, ...(event['usage'] ?? {}) };
        break;
    }
  }
  // a text block's streaming start carries `citations: null` and the like: keep what a request may send
  into.assistant = blocks.filter(Boolean).map(requestBlock);
  into.usage = usage as Anthropic.Usage | undefined;
}

/** The `data:` payloads of an SSE body, in order. */
function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((frame) =>
      frame
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter((data) => data !== '');
}

interface ChatToolCallDelta {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** The message and usage of a Chat Completions response: a JSON body, or a stream of chunks accumulated. */
async function readChatResponse(
  response: Response,
  into: { assistant: Anthropic.ContentBlockParam[]; chatMessage?: ChatAssistantMessage; usage: UsageInput | undefined },
): Promise<void> {
  const text = await response.text();
  let message: ChatAssistantMessage;
  let usage: ChatUsage | undefined;
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const body = JSON.parse(text) as { choices?: { message?: ChatAssistantMessage }[]; usage?: ChatUsage };
    message = body.choices?.[0]?.message ?? {};
    usage = body.usage;
  } else {
    let content = '';
    const calls: { id: string; function: { name: string; arguments: string } }[] = [];
    for (const data of sseData(text)) {
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data) as {
        choices?: { delta?: { content?: string | null; tool_calls?: ChatToolCallDelta[] } }[];
        usage?: ChatUsage | null;
      };
      if (chunk.usage) usage = chunk.usage;
      const delta = chunk.choices?.[0]?.delta;
      if (typeof delta?.content === 'string') content += delta.content;
      for (const call of delta?.tool_calls ?? []) {
        const into = (calls[call.index] ??= { id: '', function: { name: '', arguments: '' } });
        if (call.id) into.id = call.id;
        if (call.function?.name) into.function.name += call.function.name;
        if (call.function?.arguments) into.function.arguments += call.function.arguments;
      }
    }
    message = { content, tool_calls: calls.filter(Boolean) };
  }
  into.chatMessage = message;
  into.assistant = assistantBlocks(message, 'response.choices[0].message');
  into.usage = usage ? fromChatUsage(usage) : undefined;
}

function requestBlock(block: Block): Anthropic.ContentBlockParam {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: String(block['text'] ?? '') };
    case 'tool_use':
      return { type: 'tool_use', id: String(block['id']), name: String(block['name']), input: block['input'] ?? {} };
    case 'thinking':
      return {
        type: 'thinking',
        thinking: String(block['thinking'] ?? ''),
        signature: String(block['signature'] ?? ''),
      };
    default:
      return block as unknown as Anthropic.ContentBlockParam;
  }
}
