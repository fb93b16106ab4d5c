import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import { childMessages, type ForkChild } from '../fork/layouts.ts';
import { CACHE_SETTING_KEYS } from '../fork/snapshot.ts';
import { type CacheTtl, DEFAULT_CACHE_TTL } from '../wire/cache.ts';
import { isMarkable, withMarker, withoutMarker } from './markers.ts';
import type { HeadEnd } from './sab.ts';
import type { SharedRequest } from './shared-request.ts';

type Block = Anthropic.ContentBlockParam;
type Message = Anthropic.MessageParam;

/** Fields a child sets per request; everything else of the body is in the frozen head. */
export interface PerRequest {
  max_tokens: number;
  stream?: boolean;
  [key: string]: unknown;
}

const HEAD_KEYS = new Set<string>(['model', 'system', 'tools', 'messages', ...CACHE_SETTING_KEYS]);

function checkPerRequest(perRequest: PerRequest): void {
  for (const key of Object.keys(perRequest)) {
    if (HEAD_KEYS.has(key)) {
      throw new ForkcacheError(
        'INVALID_OPTION',
        `perRequest.${key}: "${key}" is part of the frozen head and cannot be set per request`,
        { data: { field: `perRequest.${key}` } },
      );
    }
  }
  const maxTokens = perRequest.max_tokens;
  if (!Number.isInteger(maxTokens) || maxTokens < 0) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `perRequest.max_tokens: expected a non-negative integer, got ${String(maxTokens)}`,
      { data: { field: 'perRequest.max_tokens' } },
    );
  }
}

function asBlocks(message: Message): Block[] {
  return typeof message.content === 'string'
    ? [{ type: 'text', text: message.content }]
    : [...(message.content as Block[])];
}

/**
 * The child's part with its cache markers settled: none of its own except one *moving* marker
 * on its last markable block, so that the next turn reads this turn's prefix.
 * `false` sends the child's part without any marker.
 */
export function markChild(child: ForkChild, marker: CacheTtl | false): ForkChild {
  const tailBlocks = child.tailBlocks.map((b) => withoutMarker(b));
  const messages = child.messages.map(
    (m) => (typeof m.content === 'string' ? m : { ...m, content: m.content.map((b) => withoutMarker(b)) }) as Message,
  );
  if (marker === false) return { tailBlocks, messages };
  for (let i = messages.length - 1; i >= 0; i--) {
    const blocks = asBlocks(messages[i]!);
    for (let j = blocks.length - 1; j >= 0; j--) {
      if (isMarkable(blocks[j])) {
        blocks[j] = withMarker(blocks[j]!, marker);
        messages[i] = { ...messages[i]!, content: blocks } as Message;
        return { tailBlocks, messages };
      }
    }
  }
  for (let j = tailBlocks.length - 1; j >= 0; j--) {
    if (isMarkable(tailBlocks[j])) {
      tailBlocks[j] = withMarker(tailBlocks[j]!, marker);
      break;
    }
  }
  return { tailBlocks, messages };
}

/** JSON text that follows the head: closes what the head left open and adds per-request fields. */
function serializeSuffix(headEnd: HeadEnd, child: ForkChild, perRequest: PerRequest): string {
  checkPerRequest(perRequest);
  let out = '';
  if (headEnd === 'content-open') {
    for (const block of child.tailBlocks) out += `,${JSON.stringify(block)}`;
    out += ']}';
    for (const message of child.messages) out += `,${JSON.stringify(message)}`;
  } else {
    if (child.tailBlocks.length > 0) throw new ForkcacheError('INTERNAL', 'tail blocks need a shared boundary message');
    out += child.messages.map((m) => JSON.stringify(m)).join(',');
  }
  out += ']';
  for (const [key, value] of Object.entries(perRequest))
    if (value !== undefined) out += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return `${out}}`;
}

const encoder = new TextEncoder();

interface ChildBodyOptions {
  /** TTL of the child's moving marker, or `false` for none (default `5m`). */
  marker?: CacheTtl | false;
}

/**
 * A complete request body: the frozen head bytes, unchanged, then this child's suffix.
 * The result is an ordinary (non-shared) buffer — Node's fetch refuses SAB-backed bodies —
 * so the head is copied once per request, never re-serialized.
 */
export function childRequestBody(
  prefix: { readonly head: Uint8Array; readonly headEnd: HeadEnd },
  child: ForkChild,
  perRequest: PerRequest,
  options: ChildBodyOptions = {},
): Uint8Array {
  return withSuffix(
    prefix.head,
    serializeSuffix(prefix.headEnd, markChild(child, options.marker ?? DEFAULT_CACHE_TTL), perRequest),
  );
}

/**
 * The head's bytes followed by a suffix, in an ordinary (non-shared) buffer — Node's fetch
 * refuses SAB-backed bodies — so the head is copied once per request, never re-serialized.
 */
export function withSuffix(head: Uint8Array, suffix: string): Uint8Array {
  const tail = encoder.encode(suffix);
  const body = new Uint8Array(head.byteLength + tail.byteLength);
  body.set(head, 0);
  body.set(tail, head.byteLength);
  return body;
}

/**
 * The same request built as an object, the ordinary way. Equal (as parsed JSON) to
 * `childRequestBody`'s bytes; used to check the byte path and for diagnostics.
 */
export function childRequestObject(
  shared: SharedRequest,
  child: ForkChild,
  perRequest: PerRequest,
  options: ChildBodyOptions = {},
): Record<string, unknown> {
  checkPerRequest(perRequest);
  const marked = markChild(child, options.marker ?? DEFAULT_CACHE_TTL);
  const messages = childMessages(shared.object['messages'] as Message[], marked);
  const out: Record<string, unknown> = { ...shared.object, messages };
  for (const [key, value] of Object.entries(perRequest)) if (value !== undefined) out[key] = value;
  return out;
}
