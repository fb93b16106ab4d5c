import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api-error.ts';
import { handleCountTokens } from './count-tokens.ts';
import type { EmulatorCore } from './core.ts';
import type { HeldBody } from '../../../core/util/http-body.ts';
import { checkAuth, checkVersion, parseJson, sendJson, takeBody } from './http-util.ts';
import { handleMessages, type RequestContext } from './messages.ts';
import { listModels, retrieveModel } from './models.ts';
import { sseFrame } from './sse.ts';

const isAbort = (err: unknown): boolean => (err as { name?: unknown })?.name === 'AbortError';

/** `/v1/models/{id}` → the id, percent-decoded; undefined for any other path. */
function modelIdOf(path: string): string | undefined {
  const match = /^\/v1\/models\/([^/]+)$/.exec(path);
  if (!match?.[1]) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined; // malformed escapes: no such route
  }
}

function sendError(core: EmulatorCore, res: ServerResponse, err: unknown, requestId: string): void {
  const apiError =
    err instanceof ApiError
      ? err
      : new ApiError(
          'EMULATOR_INTERNAL',
          'api_error',
          `emulator internal error: ${(err as Error)?.message ?? String(err)}`,
        );
  if (res.destroyed || res.writableEnded) return;
  if (res.headersSent) {
    // Streaming already began: the API reports a failure as an `error` event.
    core.stats.streamError();
    res.end(sseFrame('error', apiError.body(requestId)));
    return;
  }
  const headers: Record<string, string> = {};
  const retryAfter = apiError.retryAfter === undefined ? core.options.retryAfterSeconds : apiError.retryAfter;
  if (apiError.type === 'rate_limit_error' && retryAfter !== null) headers['retry-after'] = String(retryAfter);
  // A broken script or fixture will not heal on retry: tell the SDK not to.
  if (apiError.code === 'EMULATOR_SCRIPT' || apiError.code === 'EMULATOR_REPLAY_MISMATCH')
    headers['x-should-retry'] = 'false';
  sendJson(res, apiError.status, apiError.body(requestId), headers);
}

/** Handle one HTTP request: route, auth, version, body, then the endpoint. */
export async function route(
  core: EmulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const requestId = core.ids.next('req');
  const startedAt = core.clock.now();
  core.stats.request();
  res.setHeader('request-id', requestId);
  res.on('finish', () => core.stats.status(res.statusCode));
  const logged = core.log?.begin(req, res, requestId, startedAt);
  let held: HeldBody | undefined;
  try {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname.replace(/\/+$/, '');
    const modelId = req.method === 'GET' ? modelIdOf(path) : undefined;
    if (req.method === 'GET' && path === '/v1/emulator/stats') {
      held = await takeBody(core, req, logged);
      return sendJson(res, 200, statsOf(core));
    }
    const endpoint =
      req.method === 'POST' && path === '/v1/messages'
        ? 'messages'
        : req.method === 'POST' && path === '/v1/messages/count_tokens'
          ? 'count_tokens'
          : req.method === 'GET' && path === '/v1/models'
            ? 'models'
            : modelId !== undefined
              ? 'model'
              : undefined;
    // Route, key and version first: a body is buffered only for a request that may use it
    // (32 MiB were buffered before the key was checked). A refused request's body is drained
    // unbuffered after the answer (in the catch below).
    if (!endpoint)
      throw new ApiError('EMULATOR_NOT_FOUND', 'not_found_error', `Not found: ${req.method} ${path || '/'}`);
    checkAuth(req, core.options.apiKey);
    const apiVersion = checkVersion(req);
    if (endpoint === 'models') return sendJson(res, 200, listModels(core, url.searchParams));
    if (endpoint === 'model' && modelId !== undefined) return sendJson(res, 200, retrieveModel(core, modelId));
    held = await takeBody(core, req, logged);
    const body = held.bytes;
    const ctx: RequestContext = { req, res, requestId, apiVersion, signal, startedAt, exchange: logged?.exchange };
    const json = parseJson(body);
    if (endpoint === 'count_tokens') return handleCountTokens(core, ctx, json);
    await handleMessages(core, ctx, json);
  } catch (err) {
    if (isAbort(err) || signal.aborted) {
      if (!res.writableEnded) res.destroy();
      core.events.emit('request-end', { requestId, error: 'aborted' });
      return;
    }
    sendError(core, res, err, requestId);
    if (!req.readableEnded) req.resume(); // answered: drop the rest of the body unbuffered
    core.events.emit('request-end', {
      requestId,
      status: err instanceof ApiError ? err.status : 500,
      error: (err as Error)?.message ?? String(err),
    });
  } finally {
    held?.release();
  }
}

/** The stats snapshot (also served at `GET /v1/emulator/stats`). */
export function statsOf(core: EmulatorCore) {
  const now = core.clock.now();
  const entries = core.store.size(now);
  return core.stats.snapshot({
    entries,
    expired: core.store.expiredCount,
    tokenizedBlocks: core.counter.tokenizedBlocks,
  });
}
