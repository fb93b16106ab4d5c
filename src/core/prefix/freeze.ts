import { ForkcacheError } from '../util/errors.ts';
import { type WrapOptions, wrapDirective } from '../fork/directive.ts';
import { type ForkChild, type ForkLayout, type ForkPlan, planFork } from '../fork/layouts.ts';
import type { ParentSnapshot } from '../fork/snapshot.ts';
import { CACHE_TTLS, type CacheTtl, DEFAULT_CACHE_TTL } from '../wire/cache.ts';
import { type HeadEnd, SAB_HEADER_BYTES, writeFrozenSab } from './sab.ts';
import { buildSharedRequest, type SharedRequest } from './shared-request.ts';
import { DEFAULT_PROVIDER, type ProviderId, type ProviderWire, providerWireOf } from '../wire/providers.ts';
import { renderChatHead } from './chat-head.ts';
import { renderResponsesHead, type ResponsesCacheOptions } from './responses-head.ts';
import { RESPONSES_CACHE_TTLS, type ResponsesCacheTtl } from '../wire/cache.ts';

interface FreezeOptions {
  /** Message layout of every child (default `claude`). */
  layout?: ForkLayout;
  /** TTL of the shared-boundary marker (default `5m`). */
  ttl?: CacheTtl;
  /**
   * Cache markers in the head. `boundary` (default): the parent's stable marker plus one on
   * the last shared block. `last-only`: none in the head, only each child's own moving marker
   * (how most fork implementations do it: siblings then rarely read each other's prefix).
   * `none`: no caching at all (a baseline).
   */
  markers?: MarkerStrategy;
  /**
   * The wire the head is frozen in (default `anthropic`). The snapshot, the layout and the
   * marker placement stay the same; a Chat Completions provider renders them in its own format.
   */
  provider?: ProviderId;
  /**
   * OpenAI only: freeze the head for the Responses API (`POST /v1/responses`) instead of Chat
   * Completions, its writes living at least `ttl` (see `ResponsesCacheOptions`).
   */
  responses?: { ttl: ResponsesCacheTtl } | undefined;
}

export type MarkerStrategy = 'boundary' | 'last-only' | 'none';
export const MARKER_STRATEGIES: readonly MarkerStrategy[] = ['boundary', 'last-only', 'none'];

/**
 * The shared head of every child's request body, frozen once. Hand `sab` to workers; they
 * `attachFrozenPrefix(sab)` and send `head` + their own suffix, never re-serializing the head.
 */
export interface FrozenPrefix {
  /** Short id (first 16 hex chars of the sha256). */
  readonly id: string;
  readonly sha256: string;
  readonly sab: SharedArrayBuffer;
  /** A view over the SAB. Never write to it: it is shared by every worker (a SAB cannot be frozen). */
  readonly head: Uint8Array;
  readonly byteLength: number;
  readonly headEnd: HeadEnd;
  readonly layout: ForkLayout;
  readonly ttl: CacheTtl;
  readonly markers: MarkerStrategy;
  readonly provider: ProviderId;
  /** Set when the head is frozen for OpenAI's Responses API: the cache options every request carries. */
  readonly responses?: ResponsesCacheOptions;
  /** The marker each child puts on its own last block (`false` with `markers: 'none'`). */
  readonly childMarker: CacheTtl | false;
  readonly snapshot: ParentSnapshot;
  readonly plan: ForkPlan;
  readonly shared: SharedRequest;
  /** A rough token count (bytes / 4); exact counts come from the API or the emulator. */
  readonly approxTokens: number;
  /** One child's continuation: its wrapped directive after the shared part. */
  child(directive: string, options?: WrapOptions): ForkChild;
}

/**
 * Render the head text: the shared request as JSON with the closing brackets of the open
 * boundary message (or of the empty messages array) cut off. `JSON.stringify` over objects
 * built in a fixed key order is deterministic: the same snapshot always gives the same bytes.
 */
function renderHead(shared: SharedRequest): { text: string; headEnd: HeadEnd } {
  const json = JSON.stringify(shared.object);
  const messages = shared.object['messages'] as unknown[];
  const [tail, headEnd]: [string, HeadEnd] = messages.length > 0 ? [']}]}', 'content-open'] : [']}', 'messages-open'];
  if (!json.endsWith(tail)) throw new ForkcacheError('INTERNAL', `head JSON does not end with ${tail}`);
  return { text: json.slice(0, json.length - tail.length), headEnd };
}

const encoder = new TextEncoder();

/**
 * The cache options of a Responses head: `markers: 'none'` is the explicit mode with no
 * breakpoint (nothing cached, the baseline); otherwise the implicit mode, beside the head's
 * breakpoints (`boundary`) or alone (`last-only`).
 */
function responsesOptions(
  responses: FreezeOptions['responses'],
  provider: ProviderId,
  wire: ProviderWire,
  markers: MarkerStrategy,
): ResponsesCacheOptions | undefined {
  if (responses === undefined) return undefined;
  if (!wire.responsesApi)
    throw new ForkcacheError(
      'INVALID_OPTION',
      `openaiWire: the Responses API is OpenAI's; provider '${provider}' speaks ${wire.chat ? 'Chat Completions' : 'the Messages API'}`,
      { data: { field: 'openaiWire' } },
    );
  if (!RESPONSES_CACHE_TTLS.includes(responses.ttl))
    throw new ForkcacheError(
      'INVALID_OPTION',
      `responsesTtl: expected one of ${RESPONSES_CACHE_TTLS.join(', ')}, got "${String(responses.ttl)}"`,
      { data: { field: 'responsesTtl' } },
    );
  return { mode: markers === 'none' ? 'explicit' : 'implicit', ttl: responses.ttl };
}

/** Freeze a snapshot's shared head into a SharedArrayBuffer. */
export function freeze(snapshot: ParentSnapshot, options: FreezeOptions = {}): FrozenPrefix {
  const layout = options.layout ?? 'claude';
  const ttl = options.ttl ?? DEFAULT_CACHE_TTL;
  if (!CACHE_TTLS.includes(ttl))
    throw new ForkcacheError('INVALID_OPTION', `ttl: expected "5m" or "1h", got "${String(ttl)}"`, {
      data: { field: 'ttl' },
    });
  const markers = options.markers ?? 'boundary';
  if (!MARKER_STRATEGIES.includes(markers))
    throw new ForkcacheError(
      'INVALID_OPTION',
      `markers: expected one of ${MARKER_STRATEGIES.join(', ')}, got "${String(markers)}"`,
      { data: { field: 'markers' } },
    );
  const plan = planFork(snapshot.messages, layout);
  const shared = buildSharedRequest(snapshot, plan, markers === 'boundary' ? ttl : false);
  const provider = options.provider ?? DEFAULT_PROVIDER;
  const wire = providerWireOf(provider);
  const responses = responsesOptions(options.responses, provider, wire, markers);
  const { text, headEnd } = responses
    ? renderResponsesHead(shared, { cache: responses, breakpoints: markers === 'boundary' })
    : wire.chat
      ? renderChatHead(shared, { dialect: wire.chat, layout })
      : renderHead(shared);
  const bytes = encoder.encode(text);
  const { sab, sha256 } = writeFrozenSab(bytes, headEnd);
  return Object.freeze({
    id: sha256.slice(0, 16),
    sha256,
    sab,
    head: new Uint8Array(sab, SAB_HEADER_BYTES, bytes.byteLength),
    byteLength: bytes.byteLength,
    headEnd,
    layout,
    ttl,
    markers,
    provider,
    ...(responses ? { responses } : {}),
    childMarker: markers === 'none' ? false : '5m',
    snapshot,
    plan,
    shared,
    approxTokens: Math.ceil(bytes.byteLength / 4),
    child: (directive: string, wrap?: WrapOptions) => plan.continuation(wrapDirective(directive, wrap)),
  });
}
