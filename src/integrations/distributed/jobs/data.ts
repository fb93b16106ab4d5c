import { withoutCredentials } from '../../../core/wire/headers.ts';
import type { DispatchContext } from '../../../core/pool/fork-dispatch.ts';
import { FORK_QUERY_SOURCE } from '../../../core/wire/fork-text.ts';
import type { ForkJobData } from '../keys.ts';
import { toolFlagsOf, toolFlagsOn } from '../../../core/tools/tool-flags.ts';
import { workerSettings } from '../../../core/settings/engine-settings.ts';

/**
 * The job of one fork: what its host needs besides what it holds itself (its key, its endpoint,
 * its policy ceiling). `api.baseURL` is the endpoint the submitter expects: a host serving
 * another refuses the job rather than send the fork elsewhere.
 */
export function forkJobData(ctx: DispatchContext): ForkJobData {
  const { prefix, deps } = ctx;
  const options = deps.options;
  const agent = deps.agent;
  const admission = options.admission === 'on' && ctx.shared ? ctx.shared() : undefined;
  return {
    v: 1,
    fanoutId: ctx.forkId.replace(/-f\d+$/, ''),
    forkId: ctx.forkId,
    index: ctx.index,
    prefixSha256: prefix.sha256,
    base: ctx.base,
    // never a credential in Redis: hosts take the key from their own environment
    // under admission the hosts' gates own 429/529 retries: the SDK must not retry on its own
    api: {
      provider: options.api.provider,
      baseURL: options.api.baseURL,
      headers: withoutCredentials(options.api.headers),
      maxRetries: admission ? 0 : options.api.maxRetries,
      timeoutMs: options.api.timeoutMs,
      // the OpenAI wire the frozen head was laid out for (the Responses API's, or Chat Completions')
      ...(options.api.wire === undefined ? {} : { wire: options.api.wire }),
    },
    loop: {
      ...workerSettings(options, 'loop'),
      querySource: agent ? `agent:custom:${agent.type}` : FORK_QUERY_SOURCE,
      marker: prefix.childMarker,
      retry: options.turnRetry,
      gateRetries: admission !== undefined,
      requireReport: agent === undefined,
      ...(ctx.check ? { check: ctx.check } : {}),
      // a remote fork that changed nothing ends no_change too
      ...(ctx.judgeChange ? { judgeChange: true } : {}),
    },
    ...(ctx.prompt ? { prompt: ctx.prompt } : {}),
    admission,
    tools: {
      workspace: ctx.workspace,
      allow: [...(agent?.allow ?? options.allow)],
      limits: options.toolLimits,
      ...workerSettings(options, 'tools'),
      ...toolFlagsOn(toolFlagsOf(options)),
      ...(ctx.host && ctx.host.tools.length > 0 ? { host: ctx.host.tools.map((t) => t.name) } : {}),
    },
    permissions: options.permissions,
    transcriptPath: ctx.transcriptPath,
  };
}
