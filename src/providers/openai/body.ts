import type { ForkChild } from '../../core/fork/layouts.ts';
import { markChild, type PerRequest, withSuffix } from '../../core/prefix/body.ts';
import type { CacheTtl } from '../../core/wire/cache.ts';
import type { HeadEnd } from '../../core/prefix/sab.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { serializeChatSuffix } from '../../core/prefix/chat-head.ts';
import type { ChatDialect } from '../../core/wire/chat-dialect.ts';

/** The fields a Chat Completions request sets per request, from the loop's neutral ones. */
export function chatPerRequest(
  perRequest: PerRequest,
  dialect: ChatDialect,
  cacheKey: string | undefined,
): Record<string, unknown> {
  const { max_tokens: maxTokens, stream, ...rest } = perRequest;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `perRequest.max_tokens: expected a positive integer on Chat Completions, got ${String(maxTokens)}`,
      { data: { field: 'perRequest.max_tokens' } },
    );
  }
  return {
    [dialect.maxTokensField]: maxTokens,
    ...rest,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    // routing, not content: one key per fan-out keeps siblings on the machines that hold the prefix
    ...(dialect.cacheKey && cacheKey !== undefined ? { prompt_cache_key: cacheKey } : {}),
    ...dialect.requestFields,
  };
}

/** A child's Chat Completions body: the frozen head bytes, unchanged, then its suffix. */
export function chatRequestBody(
  prefix: { readonly head: Uint8Array; readonly headEnd: HeadEnd },
  child: ForkChild,
  perRequest: PerRequest,
  options: { dialect: ChatDialect; marker: CacheTtl | false; cacheKey?: string | undefined },
): Uint8Array {
  const marked = markChild(child, options.dialect.markers ? options.marker : false);
  return withSuffix(
    prefix.head,
    serializeChatSuffix(
      prefix.headEnd,
      marked,
      chatPerRequest(perRequest, options.dialect, options.cacheKey),
      options.dialect,
    ),
  );
}

const PROBE_MESSAGE = '{"role":"user","content":"x"}';

/**
 * The head as a complete request that stops at the shared boundary, asking for one token:
 * the warm-up, whose usage also measures the shared prefix (Chat Completions has no
 * token-count endpoint). A head with nothing shared gets a one-token user message.
 */
export function closedChatHead(
  prefix: { readonly head: Uint8Array; readonly headEnd: HeadEnd },
  dialect: ChatDialect,
  cacheKey?: string,
  extra: Record<string, unknown> = {},
): Uint8Array {
  const close =
    prefix.headEnd === 'content-open' ? ']}]' : prefix.headEnd === 'message-closed' ? ']' : `${PROBE_MESSAGE}]`;
  const fields = Object.entries(chatPerRequest({ max_tokens: 1, ...extra }, dialect, cacheKey))
    .map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join('');
  return withSuffix(prefix.head, `${close}${fields}}`);
}
