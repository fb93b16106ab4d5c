import { DEFAULT_RESPONSES_CACHE_TTL } from '../../../../core/wire/cache.ts';
import { ApiError, type ApiErrorType } from '../../api-error.ts';
import { renderPrefix } from '../../cache/render.ts';
import type { FaultKind } from '../../faults.ts';
import { outputMs, timeToFirstTokenMs } from '../../latency.ts';
import type { EmulatorCore } from '../../server/core.ts';
import { positionPath } from '../../server/exchange-log.ts';
import { apiKeyOf, sendJson } from '../../server/http-util.ts';
import { injectFault, runScript, type RequestContext } from '../../server/messages.ts';
import { buildOutput } from '../../server/output.ts';
import { chatModel } from '../chat.ts';
import { admitOpenAi } from '../rate-headers.ts';
import { CACHE_RULES, type CacheRule } from '../rules.ts';
import { internalUsage } from '../usage.ts';
import { responseBody, responsesUsage, streamResponse, type ResponseHead } from './body.ts';
import { applyResponsesRead, commitResponsesWrites, planResponsesCache, type ResponsesCachePlan } from './cache.ts';
import { comparePrompt, rememberPrompt } from './comparison.ts';
import { toMessagesRequest } from './convert.ts';
import { checkResponsesRequest } from './schema.ts';

const ERROR_FAULTS: Partial<Record<FaultKind, [ApiErrorType, string]>> = {
  '429': ['rate_limit_error', 'Rate limit reached for requests (emulated fault).'],
  '529': ['overloaded_error', 'The server is overloaded, please try again later.'],
  '500': ['api_error', 'The server had an error while processing your request.'],
  '504': ['timeout_error', 'Request timed out.'],
};

function logPlan(
  ctx: RequestContext,
  model: string,
  prefix: ReturnType<typeof renderPrefix>,
  plan: ResponsesCachePlan,
) {
  if (!ctx.exchange) return;
  const byHash = new Map(prefix.positions.map((p) => [p.hash, p]));
  const at = (hash: string) => byHash.get(hash)!;
  ctx.exchange.cache = {
    model,
    totalTokens: plan.totalTokens,
    markers: prefix.positions
      .filter((p) => p.cacheControl)
      .map((p) => ({ path: positionPath(p), ttl: plan.ttl, tokens: p.cumTokens })),
    read: plan.readHash ? { path: positionPath(at(plan.readHash)), tokens: plan.cachedTokens } : null,
    writes: plan.writes.map((w) => ({ path: positionPath(at(w.hash)), tokens: w.tokens, ttl: plan.ttl })),
    usage: {
      input_tokens: plan.totalTokens - plan.cachedTokens - plan.creationTokens,
      cache_creation_input_tokens: plan.creationTokens,
      cache_read_input_tokens: plan.cachedTokens,
      ephemeral_5m_input_tokens: 0,
      ephemeral_1h_input_tokens: 0,
    },
    billingBlockIgnored: false,
  };
}

/**
 * `POST /v1/responses` (the emulator's OpenAI mode): fault → validate → cache lookup under the
 * request's `prompt_cache_options` (reads apply at once) → the scripted turn, or nothing for a
 * `prewarm` → the response, JSON or SSE in the Responses event format → complete: its writes
 * become readable now, for at least the request's TTL, as in the Chat mode.
 */
export async function handleResponses(core: EmulatorCore, ctx: RequestContext, body: unknown): Promise<void> {
  const fault = injectFault(core, ctx, body, ERROR_FAULTS);
  if (fault === 'reset') return;

  const request = checkResponsesRequest(body);
  const options = request.prompt_cache_options ?? {};
  const prewarm = options.prewarm === true;
  const base = CACHE_RULES.openai;
  const model = chatModel(core, request.model, 'openai', base);
  const rule: CacheRule = { ...base, minTokens: core.minCacheable(model) };
  const messages = toMessagesRequest(request, prewarm);
  const prefix = renderPrefix(messages, model.id, core.counter, { cacheBillingBlock: true });
  const mode = options.mode ?? 'implicit';
  const ttl = options.ttl ?? DEFAULT_RESPONSES_CACHE_TTL;
  const comparison =
    options.comparison_response_id === undefined
      ? undefined
      : comparePrompt(core, options.comparison_response_id, prefix);
  const plan = planResponsesCache(prefix, core.store, rule, ctx.startedAt, { mode, ttl });
  logPlan(ctx, model.id, prefix, plan);
  const limited = admitOpenAi(core, ctx.res, apiKeyOf(ctx.req), model, internalUsage(plan, 0));
  applyResponsesRead(prefix, plan, core.store, ctx.startedAt, core.clock.now());

  const turn = await runScript(core, ctx, messages, model);
  const output = buildOutput(turn, {
    maxTokens: messages.max_tokens,
    stopSequences: [],
    promptHash: prefix.finalHash,
    count: (text) => core.counter.text(text),
  });
  const usage = responsesUsage(plan, output.outputTokens);
  const accounted = internalUsage(plan, output.outputTokens);
  limited.settle(accounted);
  const stream = request.stream === true;
  const head: ResponseHead = {
    id: `resp_${core.ids.next('msg').slice(6)}`,
    created_at: Math.floor(core.clock.now() / 1000),
    model: request.model,
    instructions: request.instructions ?? null,
    tools: request.tools ?? [],
    tool_choice: request.tool_choice ?? 'auto',
    prompt_cache_key: request.prompt_cache_key ?? null,
    prompt_cache_options: { mode, ttl, ...(prewarm ? { prewarm: true as const } : {}) },
    ...(comparison ? { prompt_cache_comparison: comparison } : {}),
  };
  rememberPrompt(core, head.id, prefix);
  const ttftMs = timeToFirstTokenMs(core.profile, {
    uncachedTokens: plan.totalTokens - plan.cachedTokens,
    cacheReadTokens: plan.cachedTokens,
    slow: fault === 'slow',
  });
  const event = { requestId: ctx.requestId, messageId: head.id, stream, usage: accounted };
  core.events.emit('request-start', { ...event, ttftMs });
  if (ttftMs > 0) await core.clock.sleep(ttftMs, ctx.signal);

  const failMidStream = fault === 'stream-error' && !prewarm;
  if (!failMidStream) core.stats.response(accounted, stream, plan.totalTokens >= rule.minTokens, plan.writes.length);
  const complete = (): void => {
    commitResponsesWrites(plan, core.store, ctx.startedAt, core.clock.now());
    core.events.emit('request-end', { ...event, status: 200 });
  };
  if (stream) {
    ctx.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    core.events.emit('response-start', event);
    await streamResponse(ctx.res, head, output, {
      clock: core.clock,
      profile: core.profile,
      signal: ctx.signal,
      usage,
      failMidStream,
      onTokens: limited.output,
    });
    if (failMidStream) {
      core.stats.streamError();
      core.events.emit('request-end', { ...event, status: 200, error: 'server_error' });
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
  sendJson(ctx.res, 200, responseBody(head, output, usage));
  complete();
}
