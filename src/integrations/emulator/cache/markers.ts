import { ApiError, invalidRequest } from '../api-error.ts';
import type { CacheControl, CacheTtl } from '../types.ts';
import type { Position } from './render.ts';
import { MAX_CACHE_MARKERS } from '../../../core/wire/cache.ts';

export interface Marker {
  /** Index into the rendered positions. */
  position: number;
  ttl: CacheTtl;
  /** Placed by the top-level (automatic) `cache_control`. */
  automatic: boolean;
}

const ttlOf = (control: CacheControl): CacheTtl => control.ttl ?? '5m';

function tooMany(found: number): ApiError {
  return new ApiError(
    'EMULATOR_TOO_MANY_BREAKPOINTS',
    'invalid_request_error',
    `A maximum of ${MAX_CACHE_MARKERS} blocks with cache_control may be provided. Found ${found}.`,
    { found },
  );
}

function where(p: Position): string {
  if (p.segment === 'messages') return `messages.${p.message}.content.${p.block}`;
  return `${p.segment}.${p.block}`;
}

/**
 * The request's cache markers in prefix order, with the top-level automatic marker resolved:
 * it lands on the last cacheable block, is a no-op if that block already has a marker with the
 * same TTL, and is an error if the TTL differs or 4 explicit markers already exist. Enforces
 * the limit of 4 and "1h markers before 5m markers". Throws ApiError (400).
 */
export function collectMarkers(positions: readonly Position[], automatic: CacheControl | null | undefined): Marker[] {
  const markers: Marker[] = [];
  for (const p of positions) {
    if (p.cacheControl) markers.push({ position: p.index, ttl: ttlOf(p.cacheControl), automatic: false });
  }
  if (automatic) {
    const ttl = ttlOf(automatic);
    const target = [...positions].reverse().find((p) => p.cacheable);
    if (target) {
      const existing = markers.find((m) => m.position === target.index);
      if (existing && existing.ttl !== ttl) {
        throw invalidRequest(
          `cache_control: the automatic cache_control (ttl ${ttl}) conflicts with the cache_control on ${where(target)} (ttl ${existing.ttl})`,
        );
      }
      if (!existing) {
        if (markers.length >= MAX_CACHE_MARKERS) throw tooMany(markers.length + 1);
        markers.push({ position: target.index, ttl, automatic: true });
      }
    }
  }
  if (markers.length > MAX_CACHE_MARKERS) throw tooMany(markers.length);
  let seen5m: Marker | undefined;
  for (const marker of markers) {
    if (marker.ttl === '5m') seen5m ??= marker;
    else if (seen5m) {
      const at = where(positions[marker.position]!);
      throw invalidRequest(
        `${at}.cache_control: a cache_control with ttl "1h" cannot come after one with ttl "5m" (at ${where(positions[seen5m.position]!)}); put longer-lived markers first`,
      );
    }
  }
  return markers;
}
