import { findModel, type ModelEntry } from '../../../core/models/catalogue.ts';
import { statusAt } from '../../../core/models/status.ts';
import { ApiError, type ApiErrorType } from '../api-error.ts';
import { renderPrefix } from '../cache/render.ts';
import type { FaultKind } from '../faults.ts';
import { outputMs, timeToFirstTokenMs } from '../latency.ts';
import type { EmulatorCore } from '../server/core.ts';
import { positionPath } from '../server/exchange-log.ts';
import { apiKeyOf, sendCutJson, sendJson } from '../server/http-util.ts';
import { injectFault, runScript, type RequestContext } from '../server/messages.ts';
import { buildOutput } from '../server/output.ts';
import { applyChatRead, commitChatWrites, planChatCache, type ChatCachePlan } from './cache.ts';
import { completionBody, streamChunks, type CompletionHead } from './completion.ts';
import { toMessagesRequest } from './convert.ts';
import { OpenAiError } from './errors.ts';
import { admitOpenAi } from './rate-headers.ts';
import { CACHE_RULES, type CacheRule, type OpenAiCompatibleApi } from './rules.ts';
import { checkChatRequest } from './schema.ts';
import { chatUsage, internalUsage } from './usage.ts';

const ERROR_FAULTS: Partial<Record<FaultKind, [ApiErrorType, string]>> = {
  '429': ['rate_limit_error', 'Rate limit reached for requests (emulated fault).'],
  '529': ['overloaded_error', 'The server is overloaded, please try again later.'],
  '500': ['api_error', 'The server had an error while processing your request.'],
  '504': ['timeout_error', 'Request timed out.'],
};

/**
 * The model of a request. These providers add and rename models weekly and a vLLM server
 * serves any name, so an id the catalogue does not know is served with the provider's cache
 * rule (and runs unpriced in the ledger); a retired catalogue model is a 404, as on the API.
 */
export function chatModel(core: EmulatorCore, id: string, api: OpenAiCompatibleApi, rule: CacheRule): ModelEntry {
  const known = findModel(id, core.modelTable);
  if (known && statusAt(known, core.clock.now()) === 'retired') {
    throw new OpenAiError(
      'EMULATOR_UNKNOWN_MODEL',
      404,
      'invalid_request_error',
      `The model \`${id}\` does not exist or you do not have access to it.`,
      'model',
      'model_not_found',
    );
  }
  if (known) return known;
  return {
    id,
    aliases: [],
    family: id,
    provider: api,
    status: 'current',
    endOfLife: null,
    replacement: null,
    minCacheableTokens: rule.minTokens,
    contextWindow: 128_000,
    maxOutputTokens: 32_768,
    constraints: {
      adaptiveThinkingOnly: false,
      forcedToolChoice: true,
      prefill: true,
      bindsThinkingBlocks: false,
      systemMessages: true,
    },
    inferenceGeo: false,
    prices: [],
    source: { name: 'none: a model the catalogue does not know', retrieved: core.modelTable.date, thirdParty: false },
    note: null,
  };
}

function logPlan(
  ctx: RequestContext,
  model: string,
  prefix: ReturnType<typeof renderPrefix>,
  plan: ChatCachePlan,
): void {
  if (!ctx.exchange) return;
  const byHash = new Map(prefix.positions.map((p) => [p.hash, p]));
  const at = (hash: string) => byHash.get(hash)!;
  ctx.exchange.cache = {
    model,
    totalTokens: plan.totalTokens,
    markers: prefix.positions
      .filter((p) => p.segment === 'messages' && p.cacheControl)
      .map((p) => ({ path: positionPath(p), ttl: '5m', tokens: p.cumTokens })),
    read: plan.readHash ? { path: positionPath(at(plan.readHash)), tokens: plan.cachedTokens } : null,
    writes: plan.writes.map((w) => ({ path: positionPath(at(w.hash)), tokens: w.tokens, ttl: '5m' })),
    usage: {
      input_tokens: plan.totalTokens - plan.cachedTokens - plan.creationTokens,
      cache_creation_input_tokens: plan.creationTokens,
      cache_read_input_tokens: plan.cachedTokens,
      ephemeral_5m_input_tokens: plan.creationTokens,
      ephemeral_1h_input_tokens: 0,
    },
    billingBlockIgnored: false,
  };
}

/**
 * `POST /v1/chat/completions`: fault → validate → cache lookup (reads apply at once) →
 * scripted turn (through the Messages-shaped view) → time to first token → the body, JSON or
 * SSE → the response is complete: only now are its cache entries readable.
 */
export async function handleChatCompletions(
  core: EmulatorCore,
  ctx: RequestContext,
  api: OpenAiCompatibleApi,
  body: unknown,
): Promise<void> {
  const fault = injectFault(core, ctx, body, ERROR_FAULTS);
  if (fault === 'reset') return;

  const chat = checkChatRequest(body);
  const base = CACHE_RULES[api];
  const model = chatModel(core, chat.model, api, base);
  const rule: CacheRule = { ...base, minTokens: core.minCacheable(model) };
  const request = toMessagesRequest(chat);
  const prefix = renderPrefix(request, model.id, core.counter, { cacheBillingBlock: true });
  const plan = planChatCache(prefix, core.store, rule, ctx.startedAt);
  logPlan(ctx, model.id, prefix, plan);
  const limited = admitOpenAi(core, ctx.res, apiKeyOf(ctx.req), model, internalUsage(plan, 0));
  applyChatRead(prefix, plan, core.store, rule, ctx.startedAt, core.clock.now());

  const turn = await runScript(core, ctx, request, model);
  const output = buildOutput(turn, {
    maxTokens: request.max_tokens,
    stopSequences: request.stop_sequences ?? [],
    promptHash: prefix.finalHash,
    count: (text) => core.counter.text(text),
  });
  const usage = chatUsage(plan, output.outputTokens, rule);
  const accounted = internalUsage(plan, output.outputTokens);
  limited.settle(accounted);
  const stream = chat.stream === true;
  const head: CompletionHead = {
    id: `chatcmpl-${core.ids.next('msg').slice(6)}`,
    created: Math.floor(core.clock.now() / 1000),
    model: chat.model,
    system_fingerprint: 'fp_forkcache',
  };
  const ttftMs = timeToFirstTokenMs(core.profile, {
    uncachedTokens: plan.totalTokens - plan.cachedTokens,
    cacheReadTokens: plan.cachedTokens,
    slow: fault === 'slow',
  });
  const event = { requestId: ctx.requestId, messageId: head.id, stream, usage: accounted };
  core.events.emit('request-start', { ...event, ttftMs });
  if (ttftMs > 0) await core.clock.sleep(ttftMs, ctx.signal);

  const failMidStream = fault === 'stream-error';
  // A cut stream is billed as a failed one is on this API (nothing: only a complete response
  // is); a non-streamed body cut on the way was complete, and is billed.
  const cutMidStream = fault === 'cut';
  if (!failMidStream && !(cutMidStream && stream))
    core.stats.response(accounted, stream, plan.totalTokens >= rule.minTokens, plan.writes.length);
  const complete = (): void => {
    // The providers' rule: an entry is readable once the response that created it has completed.
    commitChatWrites(plan, core.store, rule, ctx.startedAt, core.clock.now());
    core.events.emit('request-end', { ...event, status: 200 });
  };
  if (stream) {
    ctx.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    core.events.emit('response-start', event);
    const includeUsage = chat.stream_options?.include_usage === true;
    await streamChunks(ctx.res, head, output, {
      clock: core.clock,
      profile: core.profile,
      signal: ctx.signal,
      includeUsage,
      usage,
      failMidStream,
      cutMidStream,
      onTokens: limited.output,
    });
    if (failMidStream || cutMidStream) {
      core.stats.streamError();
      core.events.emit('request-end', { ...event, status: 200, error: failMidStream ? 'server_error' : 'cut' });
      return;
    }
    return complete();
  }
  core.events.emit('response-start', event);
  if (failMidStream)
    throw new ApiError(
      'EMULATOR_FAULT',
      'api_error',
      'The server had an error while processing your request (emulated stream-error).',
      { fault },
    );
  const ms = outputMs(core.profile, output.outputTokens);
  if (ms > 0) await core.clock.sleep(ms, ctx.signal);
  limited.output(output.outputTokens);
  if (cutMidStream) {
    sendCutJson(ctx.res, 200, completionBody(head, output, usage));
    commitChatWrites(plan, core.store, rule, ctx.startedAt, core.clock.now());
    core.stats.streamError();
    core.events.emit('request-end', { ...event, status: 200, error: 'cut' });
    return;
  }
  sendJson(ctx.res, 200, completionBody(head, output, usage));
  complete();
}
