import { collectMarkers } from '../cache/markers.ts';
import { renderPrefix } from '../cache/render.ts';
import { checkCountTokensRequest } from '../request/schema.ts';
import { checkModelRules } from '../request/model-rules.ts';
import { validateSemantics } from '../request/validate.ts';
import type { EmulatorCore } from './core.ts';
import { sendJson } from './http-util.ts';
import { requireApiModel, type RequestContext } from './messages.ts';

/**
 * `POST /v1/messages/count_tokens`: the same inputs as a message minus `max_tokens`; answers
 * `{ input_tokens }`, the whole prompt as the cache model counts it (no cache effects).
 */
export function handleCountTokens(core: EmulatorCore, ctx: RequestContext, body: unknown): void {
  const request = checkCountTokensRequest(body);
  validateSemantics(request, { apiVersion: ctx.apiVersion, countTokens: true });
  const model = requireApiModel(core, request.model);
  checkModelRules(request, model, { countTokens: true });
  const prefix = renderPrefix(request, model.id, core.counter, { cacheBillingBlock: core.options.cacheBillingBlock });
  // Marker mistakes are request errors here too.
  collectMarkers(prefix.positions, request.cache_control);
  core.stats.countTokens();
  sendJson(ctx.res, 200, { input_tokens: prefix.totalTokens });
}
