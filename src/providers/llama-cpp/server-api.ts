import { ForkcacheError } from '../../core/util/errors.ts';

/** What `/props` says about a llama-server, as far as a fan-out cares. */
interface LlamaProps {
  /** Slots (`-np`): prompts the server holds at once, each in its own part of the KV cache. */
  totalSlots: number;
  buildInfo: string | undefined;
}

/** A slot action's answer: it was done (`tokens`: saved, restored or erased), or the server refuses actions. */
export type SlotActionResult =
  { ok: true; tokens: number; bytes: number } | { ok: false; status: number; message: string };

/**
 * The engine endpoints of llama.cpp's `llama-server` that sit beside its OpenAI-compatible API:
 * `/props` (the slot count) and `/slots/{id}?action=save|restore` (a slot's KV cache to
 * and from a file under the server's `--slot-save-path`). The root is the base URL without
 * `/v1`. Requests carry the same key as the completions (`--api-key` guards these too).
 */
export class LlamaServerApi {
  readonly root: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(options: { baseURL: string; apiKey?: string | undefined; fetch?: typeof fetch }) {
    this.root = options.baseURL.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.#headers = {
      'content-type': 'application/json',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    };
    this.#fetch = options.fetch ?? fetch;
  }

  /** The server's properties; undefined when it has no `/props` (not a llama-server). */
  async props(signal?: AbortSignal): Promise<LlamaProps | undefined> {
    const response = await this.#fetch(`${this.root}/props`, { headers: this.#headers, signal: signal ?? null });
    if (!response.ok) return undefined;
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    const slots = body?.['total_slots'];
    if (typeof slots !== 'number' || !Number.isInteger(slots) || slots < 1) return undefined;
    const build = body?.['build_info'];
    return { totalSlots: slots, buildInfo: typeof build === 'string' ? build : undefined };
  }

  save(slot: number, filename: string, signal?: AbortSignal): Promise<SlotActionResult> {
    return this.#action(slot, 'save', { filename }, ['n_saved', 'n_written'], signal);
  }

  restore(slot: number, filename: string, signal?: AbortSignal): Promise<SlotActionResult> {
    return this.#action(slot, 'restore', { filename }, ['n_restored', 'n_read'], signal);
  }

  async #action(
    slot: number,
    action: 'save' | 'restore',
    body: Record<string, unknown>,
    [countField, bytesField]: [string, string],
    signal: AbortSignal | undefined,
  ): Promise<SlotActionResult> {
    const send = (): Promise<Response> =>
      this.#fetch(`${this.root}/slots/${slot}?action=${action}`, {
        method: 'POST',
        headers: this.#headers,
        body: JSON.stringify(body),
        signal: signal ?? null,
      });
    // a kept-alive connection the server closed as it was reused fails before anything is
    // done: once more on a fresh one (a save or restore of the same file is idempotent)
    const response = await send().catch((err: unknown) => {
      if (signal?.aborted) throw err;
      return send();
    });
    const json = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!response.ok) {
      const error = json?.['error'] as { message?: unknown } | undefined;
      return {
        ok: false,
        status: response.status,
        message: typeof error?.message === 'string' ? error.message : `HTTP ${response.status}`,
      };
    }
    const tokens = json?.[countField];
    if (typeof tokens !== 'number')
      throw new ForkcacheError(
        'FORK_API_ERROR',
        `llama-server: POST /slots/${slot}?action=${action} answered without ${countField}`,
        { data: { slot, action } },
      );
    const bytes = json?.[bytesField];
    return { ok: true, tokens, bytes: typeof bytes === 'number' ? bytes : 0 };
  }
}
