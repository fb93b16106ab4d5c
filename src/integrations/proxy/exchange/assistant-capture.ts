/**
 * The assistant turn of a response, rebuilt block by block from its SSE frames (or read from a
 * JSON body), for the requests whose answer a fork may continue: `forkcache proxy --mcp` forks
 * from the request in which the client called the fork tool, and the children's shared history
 * ends with that turn exactly as the model gave it (thinking blocks and their signatures
 * included: the API refuses a tool_use turn whose thinking was changed).
 */
export type CapturedBlock = Record<string, unknown> & { type: string };

export interface CapturedTurn {
  id: string | undefined;
  content: CapturedBlock[];
  stopReason: string | undefined;
}

export class AssistantCapture {
  #id: string | undefined;
  #stopReason: string | undefined;
  readonly #blocks: CapturedBlock[] = [];
  /** Partial tool input JSON per block index (it arrives as string fragments). */
  readonly #inputs = new Map<number, string>();
  #broken = false;

  /** One parsed SSE frame (`event`, its JSON data). */
  frame(event: string, data: Record<string, unknown>): void {
    if (this.#broken) return;
    switch (event) {
      case 'message_start': {
        const message = data['message'] as Record<string, unknown> | undefined;
        if (typeof message?.['id'] === 'string') this.#id = message['id'];
        return;
      }
      case 'content_block_start': {
        const index = data['index'];
        const block = data['content_block'] as CapturedBlock | undefined;
        if (typeof index !== 'number' || !block || typeof block.type !== 'string') return void (this.#broken = true);
        this.#blocks[index] = { ...block };
        if (block.type === 'tool_use' || block.type === 'server_tool_use') this.#inputs.set(index, '');
        return;
      }
      case 'content_block_delta':
        return this.#delta(data);
      case 'content_block_stop': {
        const index = data['index'];
        if (typeof index !== 'number') return;
        const partial = this.#inputs.get(index);
        if (partial !== undefined && this.#blocks[index]) {
          try {
            this.#blocks[index]!['input'] = partial === '' ? {} : (JSON.parse(partial) as unknown);
          } catch {
            this.#broken = true;
          }
          this.#inputs.delete(index);
        }
        return;
      }
      case 'message_delta': {
        const delta = data['delta'] as Record<string, unknown> | undefined;
        if (typeof delta?.['stop_reason'] === 'string') this.#stopReason = delta['stop_reason'];
        return;
      }
    }
  }

  #delta(data: Record<string, unknown>): void {
    const index = data['index'];
    const delta = data['delta'] as Record<string, unknown> | undefined;
    const block = typeof index === 'number' ? this.#blocks[index] : undefined;
    if (!block || !delta) return void (this.#broken = true);
    const append = (key: string, value: unknown): void => {
      if (typeof value === 'string') block[key] = String(block[key] ?? '') + value;
    };
    switch (delta['type']) {
      case 'text_delta':
        return append('text', delta['text']);
      case 'thinking_delta':
        return append('thinking', delta['thinking']);
      case 'signature_delta':
        return append('signature', delta['signature']);
      case 'input_json_delta':
        this.#inputs.set(
          index as number,
          (this.#inputs.get(index as number) ?? '') + String(delta['partial_json'] ?? ''),
        );
        return;
      case 'citations_delta': {
        const list = Array.isArray(block['citations']) ? (block['citations'] as unknown[]) : [];
        block['citations'] = [...list, delta['citation']];
        return;
      }
    }
  }

  /** A non-streamed answer: the message itself. */
  json(message: Record<string, unknown>): void {
    if (message['type'] !== 'message' || !Array.isArray(message['content'])) return;
    if (typeof message['id'] === 'string') this.#id = message['id'];
    if (typeof message['stop_reason'] === 'string') this.#stopReason = message['stop_reason'];
    this.#blocks.push(...(message['content'] as CapturedBlock[]));
  }

  /** The turn, or undefined when the stream was cut or a frame did not fit (never a guess). */
  turn(): CapturedTurn | undefined {
    if (this.#broken || this.#inputs.size > 0 || this.#blocks.length === 0 || this.#blocks.includes(undefined as never))
      return undefined;
    return { id: this.#id, content: this.#blocks, stopReason: this.#stopReason };
  }
}
