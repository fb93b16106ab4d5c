import type { MessagesRequest, TextBlockParam } from '../../../src/integrations/emulator/types.ts';
import { BlockTokenCounter } from '../../../src/integrations/emulator/tokens/block-tokens.ts';
import { applyRead, commitWrites, planCache } from '../../../src/integrations/emulator/cache/plan.ts';
import { collectMarkers } from '../../../src/integrations/emulator/cache/markers.ts';
import { renderPrefix } from '../../../src/integrations/emulator/cache/render.ts';
import type { CacheStore } from '../../../src/integrations/emulator/cache/store.ts';
import { MODEL, wordTokenizer, words } from './helpers.ts';

/** Builders for the pure cache-model tests (no server). */
export const counter = new BlockTokenCounter(wordTokenizer, { toolPromptTokens: 0, imageTokens: 0 });

export function request(fields: Partial<MessagesRequest>): MessagesRequest {
  return { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...fields };
}

export function text(n: number, tag: string, marker?: '5m' | '1h'): TextBlockParam {
  const block: TextBlockParam = { type: 'text', text: words(n, tag) };
  if (marker) block.cache_control = marker === '5m' ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: '1h' };
  return block;
}

export function render(req: MessagesRequest, model = MODEL) {
  return renderPrefix(req, model, counter);
}

export function plan(req: MessagesRequest, store: CacheStore, now = 0, minCacheableTokens = 10) {
  const prefix = render(req);
  const markers = collectMarkers(prefix.positions, req.cache_control);
  return planCache(prefix, markers, store, { now, minCacheableTokens });
}

/** Plan a request arriving at `now` whose response begins at once; returns its usage. */
export function run(req: MessagesRequest, store: CacheStore, now = 0, minCacheableTokens = 10) {
  const p = plan(req, store, now, minCacheableTokens);
  applyRead(store, p, now, now);
  commitWrites(store, p, now, now);
  return p.usage;
}
