import type { IncomingMessage, ServerResponse } from 'node:http';
import { statusAt } from '../../../core/models/status.ts';
import type { EmulatorCore } from '../server/core.ts';
import type { HeldBody } from '../../../core/util/http-body.ts';
import { getHeader, parseJson, sendJson, takeBody } from '../server/http-util.ts';
import type { RequestContext } from '../server/messages.ts';
import { statsOf } from '../server/router.ts';
import { handleChatCompletions } from './chat.ts';
import { handleResponses } from './responses/handler.ts';
import { OpenAiError, toOpenAiError } from './errors.ts';
import type { OpenAiCompatibleApi } from './rules.ts';

const isAbort = (err: unknown): boolean => (err as { name?: unknown })?.name === 'AbortError';

/**
 * Where each provider serves Chat Completions (and OpenAI its Responses API): OpenAI under `/v1`, DashScope under
 * `/compatible-mode/v1` (its base URL ends there), DeepSeek at the root and under `/v1`.
 */
const PREFIXES: Readonly<Record<OpenAiCompatibleApi, readonly string[]>> = {
  openai: ['/v1'],
  dashscope: ['/compatible-mode/v1', '/v1'],
  deepseek: ['', '/v1'],
};

function endpointOf(
  api: OpenAiCompatibleApi,
  method: string | undefined,
  path: string,
): 'chat' | 'responses' | 'models' | undefined {
  for (const prefix of PREFIXES[api]) {
    if (method === 'POST' && path === `${prefix}/chat/completions`) return 'chat';
    // the Responses API is OpenAI's own: DashScope and DeepSeek serve Chat Completions only
    if (api === 'openai' && method === 'POST' && path === `${prefix}/responses`) return 'responses';
    if (method === 'GET' && path === `${prefix}/models`) return 'models';
  }
  return undefined;
}

/** Bearer auth, as every OpenAI-compatible API takes it (401 in OpenAI's words otherwise). */
function checkBearer(req: IncomingMessage, expected: string | undefined): void {
  const key = /^Bearer\s+(.+)$/i.exec(getHeader(req, 'authorization') ?? '')?.[1]?.trim();
  if (!key) {
    throw new OpenAiError(
      'EMULATOR_AUTHENTICATION',
      401,
      'invalid_request_error',
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      null,
      null,
    );
  }
  if (expected !== undefined && key !== expected) {
    throw new OpenAiError(
      'EMULATOR_AUTHENTICATION',
      401,
      'invalid_request_error',
      'Incorrect API key provided.',
      null,
      'invalid_api_key',
    );
  }
}

/** `GET …/models`: the catalogue's models of this provider, in OpenAI's list shape. */
function listModels(core: EmulatorCore, api: OpenAiCompatibleApi): unknown {
  const now = core.clock.now();
  const data = core.modelTable.models
    .filter((m) => m.provider === api && statusAt(m, now) !== 'retired')
    .map((m) => ({
      id: m.id,
      object: 'model',
      created: Math.floor(Date.parse(`${m.prices[0]?.effectiveFrom ?? core.modelTable.date}T00:00:00Z`) / 1000),
      owned_by: api === 'openai' ? 'openai' : api,
    }));
  return { object: 'list', data };
}

/** Handle one HTTP request of an OpenAI-compatible mode: route, auth, body, endpoint. */
export async function routeOpenAi(
  core: EmulatorCore,
  api: OpenAiCompatibleApi,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const requestId = `req_${core.ids.next('req').slice(8)}`;
  const startedAt = core.clock.now();
  core.stats.request();
  res.setHeader('x-request-id', requestId);
  res.on('finish', () => core.stats.status(res.statusCode));
  const logged = core.log?.begin(req, res, requestId, startedAt);
  let held: HeldBody | undefined;
  try {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname.replace(/\/+$/, '');
    if (req.method === 'GET' && path === '/v1/emulator/stats') return sendJson(res, 200, statsOf(core));
    const endpoint = endpointOf(api, req.method, path);
    if (!endpoint)
      throw new OpenAiError(
        'EMULATOR_NOT_FOUND',
        404,
        'invalid_request_error',
        `Invalid URL (${req.method} ${path || '/'})`,
      );
    checkBearer(req, core.options.apiKey);
    if (endpoint === 'models') return sendJson(res, 200, listModels(core, api));
    held = await takeBody(core, req, logged);
    const body = held.bytes;
    let json: unknown;
    try {
      json = parseJson(body);
    } catch (err) {
      throw OpenAiError.invalid(`We could not parse the JSON body of your request. (${(err as Error).message})`, null);
    }
    const ctx: RequestContext = { req, res, requestId, apiVersion: api, signal, startedAt, exchange: logged?.exchange };
    if (endpoint === 'responses') await handleResponses(core, ctx, json);
    else await handleChatCompletions(core, ctx, api, json);
  } catch (err) {
    if (isAbort(err) || signal.aborted) {
      if (!res.writableEnded) res.destroy();
      core.events.emit('request-end', { requestId, error: 'aborted' });
      return;
    }
    const error = toOpenAiError(err, core.options.retryAfterSeconds);
    if (!res.destroyed && !res.writableEnded) {
      if (res.headersSent) {
        core.stats.streamError();
        res.end(`data: ${JSON.stringify(error.body())}\n\n`);
      } else {
        const headers: Record<string, string> = {};
        if (error.status === 429 && error.retryAfter !== null) headers['retry-after'] = String(error.retryAfter);
        if (error.code === 'EMULATOR_SCRIPT' || error.code === 'EMULATOR_REPLAY_MISMATCH')
          headers['x-should-retry'] = 'false';
        sendJson(res, error.status, error.body(), headers);
      }
    }
    if (!req.readableEnded) req.resume();
    core.events.emit('request-end', { requestId, status: error.status, error: error.message });
  } finally {
    held?.release();
  }
}
