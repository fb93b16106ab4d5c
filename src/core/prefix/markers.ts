import type Anthropic from '@anthropic-ai/sdk';

import type { CacheTtl } from '../wire/cache.ts';

/** The marker object, in the API's shape; 5m is the default and is sent without `ttl`. */
function cacheMarker(ttl: CacheTtl): Anthropic.CacheControlEphemeral {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

type WithMarker = { cache_control?: Anthropic.CacheControlEphemeral | null };

export function markerOf(value: unknown): Anthropic.CacheControlEphemeral | undefined {
  const marker = (value as WithMarker | null)?.cache_control;
  return marker ?? undefined;
}

export function ttlOf(marker: Anthropic.CacheControlEphemeral): CacheTtl {
  return marker.ttl === '1h' ? '1h' : '5m';
}

/** A copy without `cache_control` (other keys keep their order). */
export function withoutMarker<T>(value: T): T {
  if (typeof value !== 'object' || value === null || !('cache_control' in value)) return value;
  const { cache_control: _dropped, ...rest } = value as T & WithMarker;
  return rest as T;
}

/** A copy with the marker set (appended last, or replacing an existing one in place). */
export function withMarker<T>(value: T, ttl: CacheTtl): T {
  return { ...withoutMarker(value), cache_control: cacheMarker(ttl) } as T;
}

/**
 * Blocks the API refuses a marker on: thinking blocks and empty text blocks. A marker meant
 * for such a block goes on the nearest markable block before it.
 */
export function isMarkable(block: unknown): boolean {
  const b = block as { type?: unknown; text?: unknown };
  if (b.type === 'thinking' || b.type === 'redacted_thinking') return false;
  if (b.type === 'text' && b.text === '') return false;
  return true;
}
