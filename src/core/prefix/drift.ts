import { ForkcacheError } from '../util/errors.ts';

/** Index of the first byte where `body` stops matching `head`, or -1 when `body` starts with all of `head`. */
export function firstDifference(body: Uint8Array, head: Uint8Array): number {
  const n = Math.min(body.byteLength, head.byteLength);
  // memcmp first (fast path for multi-MiB heads); only a mismatch pays for the byte scan.
  if (
    n === head.byteLength &&
    Buffer.from(body.buffer, body.byteOffset, n).equals(Buffer.from(head.buffer, head.byteOffset, n))
  )
    return -1;
  for (let i = 0; i < n; i++) if (body[i] !== head[i]) return i;
  return n;
}

function excerpt(bytes: Uint8Array, at: number): string {
  return Buffer.from(bytes.subarray(Math.max(0, at - 24), Math.min(bytes.byteLength, at + 24))).toString('utf8');
}

/**
 * The wire-level check: an outgoing body must begin with the frozen head, byte for byte.
 * A mismatch is an error, never a silent cache miss.
 * @throws ForkcacheError `FORK_PREFIX_DRIFT` with the offset and both sides around it.
 */
export function assertStartsWithHead(body: Uint8Array, head: Uint8Array, prefixId = ''): void {
  const at = firstDifference(body, head);
  if (at < 0) return;
  throw new ForkcacheError(
    'FORK_PREFIX_DRIFT',
    `request body drifts from frozen prefix ${prefixId} at byte ${at} of ${head.byteLength}`,
    {
      data: {
        prefixId,
        offset: at,
        headBytes: head.byteLength,
        expected: excerpt(head, at),
        actual: excerpt(body, at),
      },
    },
  );
}

function bodyBytes(body: unknown): Uint8Array | undefined {
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (typeof body === 'string') return new TextEncoder().encode(body);
  return undefined;
}

interface DriftCheckOptions {
  /** The frozen head every Messages request must start with. */
  head: Uint8Array;
  prefixId?: string;
  /** The fetch that really sends (default: the global one). */
  fetch?: typeof fetch;
  /** The endpoint whose bodies are checked (default `/v1/messages`; Chat Completions: `/chat/completions`). */
  path?: string;
  /** Called before the rejection, e.g. to count drift events. */
  onDrift?: (error: ForkcacheError) => void;
}

/**
 * A `fetch` for the SDK client (`new Anthropic({ fetch })`, `new OpenAI({ fetch })`) that
 * checks every `POST …/v1/messages` (or `options.path`) body against the head before it
 * leaves the process.
 * Other requests (count_tokens, stats) pass through unchecked.
 */
export function driftCheckedFetch(options: DriftCheckOptions): typeof fetch {
  const inner = options.fetch ?? fetch;
  const path = options.path ?? '/v1/messages';
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (init?.method === 'POST' && new URL(url).pathname.endsWith(path)) {
      const bytes = bodyBytes(init.body);
      try {
        if (!bytes)
          throw new ForkcacheError(
            'FORK_PREFIX_DRIFT',
            'request body is not raw bytes: it was re-serialized, not sent from the frozen head',
            { data: { prefixId: options.prefixId ?? '' } },
          );
        assertStartsWithHead(bytes, options.head, options.prefixId);
      } catch (err) {
        options.onDrift?.(err as ForkcacheError);
        throw err;
      }
    }
    return inner(input, init);
  };
}
