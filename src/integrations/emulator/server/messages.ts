import type { IncomingMessage, ServerResponse } from 'node:http';
import { findModel, type ModelEntry } from '../../../core/models/catalogue.ts';
import { statusAt } from '../../../core/models/status.ts';
import { ApiError, type ApiErrorType } from '../api-error.ts';
import { collectMarkers } from '../cache/markers.ts';
import { applyRead, commitWrites, planCache, type CachePlan } from '../cache/plan.ts';
import { renderPrefix } from '../cache/render.ts';
import { FAULT_HEADER, type FaultKind } from '../faults.ts';
import { outputMs, timeToFirstTokenMs } from '../latency.ts';
import { checkMessagesRequest } from '../request/schema.ts';
import { answersWithThinking, checkModelRules } from '../request/model-rules.ts';
import { signThinking } from '../request/thinking-binding.ts';
import { validateSemantics } from '../request/validate.ts';
import { SCRIPT_HEADER, type ScriptedTurn } from '../scripts/types.ts';
import type { MessagesRequest, ResponseMessage, ResponseUsage } from '../types.ts';
import type { EmulatorCore, EmulatorEvent } from './core.ts';
import { describePlan, type Exchange } from './exchange-log.ts';
import { apiKeyOf, getHeader, sendCutJson, sendJson, startSse } from './http-util.ts';
import { buildOutput } from './output.ts';
import type { AdmittedRequest } from '../rate-limits/limiter.ts';
import { sseFrame, streamBody } from './sse.ts';

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  apiVersion: string;
  /** Aborted when the client goes away or the emulator is destroyed. */
  signal: AbortSignal;
  /** Arrival time on the emulator clock: TTLs run from here. */
  startedAt: number;
  /** Set when `logDir` is on: the handler adds its cache plan to the exchange's record. */
  exchange?: Exchange | undefined;
}

const ERROR_FAULTS: Partial<Record<FaultKind, [ApiErrorType, string]>> = {
  '429': ['rate_limit_error', 'This request would exceed your rate limit (emulated fault).'],
  '529': ['overloaded_error', 'Overloaded'],
  '500': ['api_error', 'Internal server error'],
  '504': ['timeout_error', 'Request timed out'],
};

/** Resolve the model (404 when unknown or retired, as the API answers). */
export function requireApiModel(core: EmulatorCore, id: string): ModelEntry {
  const model = findModel(id, core.modelTable);
  if (!model || statusAt(model, core.clock.now()) === 'retired')
    throw new ApiError('EMULATOR_UNKNOWN_MODEL', 'not_found_error', `model: ${id}`, { model: id });
  return model;
}

function toUsage(
  plan: CachePlan,
  outputTokens: number,
  thinkingTokens: number,
  request: MessagesRequest,
): ResponseUsage {
  const u = plan.usage;
  return {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    cache_creation: {
      ephemeral_5m_input_tokens: u.ephemeral_5m_input_tokens,
      ephemeral_1h_input_tokens: u.ephemeral_1h_input_tokens,
    },
    output_tokens: outputTokens,
    output_tokens_details: { thinking_tokens: thinkingTokens },
    service_tier: 'standard',
    inference_geo: request.inference_geo ?? null,
    speed: request.speed === 'fast' ? 'fast' : 'standard',
    server_tool_use: null,
  };
}

function checkTurn(turn: unknown, name: string): ScriptedTurn {
  const content = (turn as ScriptedTurn | undefined)?.content;
  const ok =
    Array.isArray(content) &&
    content.every(
      (b) =>
        (b?.type === 'text' && typeof b.text === 'string') ||
        (b?.type === 'tool_use' && typeof b.name === 'string' && typeof b.input === 'object' && b.input !== null),
    );
  if (!ok)
    throw new ApiError(
      'EMULATOR_SCRIPT',
      'api_error',
      `scripted model "${name}" returned an invalid turn (expected { content: [text | tool_use blocks] })`,
    );
  return turn as ScriptedTurn;
}

export async function runScript(
  core: EmulatorCore,
  ctx: RequestContext,
  request: MessagesRequest,
  model: ModelEntry,
): Promise<ScriptedTurn> {
  if (request.max_tokens === 0) return { content: [] };
  const script = core.scripts.resolve(getHeader(ctx.req, SCRIPT_HEADER));
  try {
    return checkTurn(await script.respond({ request, model }), script.name);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const code =
      (err as { code?: unknown }).code === 'EMULATOR_REPLAY_MISMATCH' ? 'EMULATOR_REPLAY_MISMATCH' : 'EMULATOR_SCRIPT';
    throw new ApiError(
      code,
      'api_error',
      `scripted model "${script.name}" failed: ${(err as Error).message ?? String(err)}`,
    );
  }
}

/** The scripted models do not reason; with `display: "omitted"` the API sends no text either. */
const THINKING_SUMMARY = 'The scripted model follows fixed rules; there is no reasoning to summarize.';

function thinkingBlock(
  request: MessagesRequest,
  model: ModelEntry,
): { thinking: string; signature: string } | undefined {
  if (!answersWithThinking(request, model)) return undefined;
  const thinking = request.thinking?.display === 'omitted' ? '' : THINKING_SUMMARY;
  return { thinking, signature: signThinking(model.id, request.messages, thinking) };
}

/**
 * The fault this request gets (its header, `faultFor`, or the random rate), counted. An error
 * fault throws the API's error in `errors`' wording; `reset` destroys the socket (the caller
 * stops); `slow` and `stream-error` are the caller's to play out.
 */
export function injectFault(
  core: EmulatorCore,
  ctx: RequestContext,
  body: unknown,
  errors: Partial<Record<FaultKind, [ApiErrorType, string]>>,
): FaultKind | undefined {
  const fault = core.faults.pick(getHeader(ctx.req, FAULT_HEADER) ?? core.options.faultFor?.(body));
  if (fault) core.stats.fault(fault);
  const errorFault = fault === undefined ? undefined : errors[fault];
  if (errorFault) throw new ApiError('EMULATOR_FAULT', errorFault[0], errorFault[1], { fault });
  if (fault === 'reset') {
    ctx.req.socket.destroy();
    core.events.emit('request-end', { requestId: ctx.requestId, error: 'reset' });
  }
  return fault;
}

/** What the cache step decided: the request's prefix, its cache plan (reads applied), its rate-limit admission. */
interface CacheLookup {
  prefix: ReturnType<typeof renderPrefix>;
  plan: CachePlan;
  limited: AdmittedRequest;
  /** Why the cache missed against the message the request names (`diagnostics.previous_message_id`). */
  missReason: ReturnType<EmulatorCore['diagnostics']['reason']>;
}

/**
 * The cache step: lay out the prefix, plan its reads and writes, admit it under the rate limits
 * (once the plan says what counts: reads are exempt), then apply the reads at once. Writes wait
 * for the response to begin (`commitWrites`).
 */
export function lookUpCache(
  core: EmulatorCore,
  ctx: RequestContext,
  request: MessagesRequest,
  model: ModelEntry,
): CacheLookup {
  const prefix = renderPrefix(request, model.id, core.counter, { cacheBillingBlock: core.options.cacheBillingBlock });
  const markers = collectMarkers(prefix.positions, request.cache_control);
  const plan = planCache(prefix, markers, core.store, {
    now: ctx.startedAt,
    minCacheableTokens: core.minCacheable(model),
    lookback: core.options.lookback,
  });
  if (ctx.exchange)
    ctx.exchange.cache = describePlan(model.id, prefix.positions, markers, plan, prefix.billingBlockIgnored);
  // Rate limits are checked once the cache plan says what counts (reads are exempt), before anything is read or written.
  const limited = core.rateLimits.admit(ctx.res, apiKeyOf(ctx.req), model, plan.usage);
  applyRead(core.store, plan, ctx.startedAt, core.clock.now());
  const missReason = core.diagnostics.reason(
    request.diagnostics?.previous_message_id,
    prefix.fingerprint,
    plan.usage.cache_read_input_tokens,
  );
  return { prefix, plan, limited, missReason };
}

/** The answer step: the scripted turn as the API's message, its usage settled with the rate limits. */
async function composeMessage(
  core: EmulatorCore,
  ctx: RequestContext,
  request: MessagesRequest,
  model: ModelEntry,
  { prefix, plan, limited, missReason }: CacheLookup,
): Promise<{ message: ResponseMessage; blockTokens: number[] }> {
  const turn = await runScript(core, ctx, request, model);
  const output = buildOutput(turn, {
    maxTokens: request.max_tokens,
    stopSequences: request.stop_sequences ?? [],
    promptHash: prefix.finalHash,
    count: (text) => core.counter.text(text),
    thinking: thinkingBlock(request, model),
  });
  const thinkingTokens = output.content[0]?.type === 'thinking' ? (output.blockTokens[0] ?? 0) : 0;
  const usage = toUsage(plan, output.outputTokens, thinkingTokens, request);
  limited.settle(usage);
  const message: ResponseMessage = {
    id: core.ids.next('msg'),
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: output.content,
    stop_reason: output.stopReason,
    stop_sequence: output.stopSequence,
    usage,
    diagnostics: missReason ? { cache_miss_reason: missReason } : null,
  };
  return { message, blockTokens: output.blockTokens };
}

/**
 * What the endpoint bills: a complete response, its usage; a stream that fails or is cut
 * after `message_start`, what that event reported (`startUsage`: all a client can ever know of
 * it); a non-streamed response that fails, nothing (the client got an error, not a message); one
 * whose body is cut on the way, all of it (it was complete when its bytes began to leave).
 */
export function billedUsage(
  usage: ResponseUsage,
  stream: boolean,
  fault: FaultKind | undefined,
): { billed: ResponseUsage | undefined; startUsage: ResponseUsage } {
  const failMidStream = fault === 'stream-error';
  const cut = fault === 'cut';
  const startUsage = { ...usage, output_tokens: Math.min(1, usage.output_tokens) };
  const billed = stream && (failMidStream || cut) ? startUsage : failMidStream ? undefined : usage;
  return { billed, startUsage };
}

/** The response begins here: only now may other requests read what this one wrote; it is billed. */
function beginResponse(
  core: EmulatorCore,
  ctx: RequestContext,
  { prefix, plan }: CacheLookup,
  message: ResponseMessage,
  stream: boolean,
  fault: FaultKind | undefined,
): ResponseUsage {
  const { usage } = message;
  commitWrites(core.store, plan, ctx.startedAt, core.clock.now());
  core.diagnostics.remember(
    message.id,
    prefix.fingerprint,
    usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
  );
  const { billed, startUsage } = billedUsage(usage, stream, fault);
  if (billed) core.stats.response(billed, stream, plan.eligible, plan.writes.length);
  if (ctx.exchange) ctx.exchange.billed = billed ? { messageId: message.id, usage: billed } : null;
  return startUsage;
}

/**
 * `POST /v1/messages`: fault → validate → cache lookup (reads apply at once) → scripted turn →
 * wait out the time to first token → the response begins: cache writes become readable →
 * stream or send the message.
 */
export async function handleMessages(core: EmulatorCore, ctx: RequestContext, body: unknown): Promise<void> {
  if (ctx.exchange) ctx.exchange.billed = null; // until a response begins
  const fault = injectFault(core, ctx, body, ERROR_FAULTS);
  if (fault === 'reset') return;

  const request = checkMessagesRequest(body);
  validateSemantics(request, { apiVersion: ctx.apiVersion });
  const model = requireApiModel(core, request.model);
  checkModelRules(request, model);
  const lookup = lookUpCache(core, ctx, request, model);
  const { message, blockTokens } = await composeMessage(core, ctx, request, model, lookup);
  const { usage } = message;
  const stream = request.stream === true;
  const ttftMs = timeToFirstTokenMs(core.profile, {
    uncachedTokens: usage.input_tokens + usage.cache_creation_input_tokens,
    cacheReadTokens: usage.cache_read_input_tokens,
    slow: fault === 'slow',
  });
  const event = { requestId: ctx.requestId, messageId: message.id, stream, usage };
  core.events.emit('request-start', { ...event, ttftMs });
  if (ttftMs > 0) await core.clock.sleep(ttftMs, ctx.signal);

  const startUsage = beginResponse(core, ctx, lookup, message, stream, fault);
  if (stream) return sendStream(core, ctx, { message, blockTokens, startUsage, event, fault }, lookup.limited);
  return sendWhole(core, ctx, { message, event, fault }, lookup.limited);
}

interface Answer {
  message: ResponseMessage;
  event: EmulatorEvent;
  fault: FaultKind | undefined;
}

/** The send step, streamed: `message_start` with what it reports, then the body frame by frame. */
async function sendStream(
  core: EmulatorCore,
  ctx: RequestContext,
  { message, blockTokens, startUsage, event, fault }: Answer & { blockTokens: number[]; startUsage: ResponseUsage },
  limited: AdmittedRequest,
): Promise<void> {
  const failMidStream = fault === 'stream-error';
  const cut = fault === 'cut';
  startSse(ctx.res);
  ctx.res.write(
    sseFrame('message_start', {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: startUsage },
    }),
  );
  core.events.emit('response-start', event);
  await streamBody(ctx.res, message, {
    clock: core.clock,
    profile: core.profile,
    signal: ctx.signal,
    blockTokens,
    failMidStream,
    cutMidStream: cut,
    onTokens: limited.output,
  });
  if (failMidStream || cut) core.stats.streamError();
  const error = failMidStream ? { error: 'overloaded_error' } : cut ? { error: 'cut' } : {};
  core.events.emit('request-end', { ...event, status: 200, ...error });
}

/** The send step, not streamed: the whole message once its output time has passed. */
async function sendWhole(
  core: EmulatorCore,
  ctx: RequestContext,
  { message, event, fault }: Answer,
  limited: AdmittedRequest,
): Promise<void> {
  const { usage } = message;
  core.events.emit('response-start', event);
  if (fault === 'stream-error')
    throw new ApiError('EMULATOR_FAULT', 'api_error', 'Internal server error (emulated stream-error)', { fault });
  const ms = outputMs(core.profile, usage.output_tokens);
  if (ms > 0) await core.clock.sleep(ms, ctx.signal);
  limited.output(usage.output_tokens);
  if (fault === 'cut') {
    sendCutJson(ctx.res, 200, message);
    core.stats.streamError();
    core.events.emit('request-end', { ...event, status: 200, error: 'cut' });
    return;
  }
  sendJson(ctx.res, 200, message);
  core.events.emit('request-end', { ...event, status: 200 });
}
