import type Anthropic from '@anthropic-ai/sdk';

/** One Messages request the app sent through the wrapped fetch, and what came back. */
export interface CapturedExchange {
  /** The request body exactly as sent. */
  readonly body: string;
  readonly request: Record<string, unknown>;
  /** The assistant turn of the response (content blocks), once read. */
  assistant: Anthropic.ContentBlockParam[];
  usage: Anthropic.Usage | undefined;
  /** Settles when the response has been read to its end (or could not be). */
  readonly done: Promise<void>;
}

type Fetch = typeof globalThis.fetch;

const isMessagesCall = (url: string, init: RequestInit | undefined): boolean =>
  (init?.method ?? 'GET').toUpperCase() === 'POST' && /\/messages(\?|$)/.test(url) && typeof init?.body === 'string';

/**
 * The app's provider `fetch`, wrapped: every Messages request is kept with its exact body, and
 * its response is read on a copy (the app gets the upstream's bytes untouched) for the
 * assistant turn and the usage. A fork tool then forks from the request whose response called it.
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
    if (!isMessagesCall(url, init) || !response.ok) return response;
    const body = init!.body as string;
    let request: Record<string, unknown>;
    try {
      request = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return response;
    }
    const exchange: { -readonly [K in keyof CapturedExchange]: CapturedExchange[K] } = {
      body,
      request,
      assistant: [],
      usage: undefined,
      done: Promise.resolve(),
    };
    exchange.done = readResponse(response.clone(), exchange).then(
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
  into: { assistant: Anthropic.ContentBlockParam[]; usage: Anthropic.Usage | undefined },
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
