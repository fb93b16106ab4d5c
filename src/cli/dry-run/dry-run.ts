import { join } from 'node:path';
import { systemClock } from '../../core/util/clock.ts';
import { type ForkEngineOptions, resolveEngineOptions, type ResolvedEngineOptions } from '../../core/engine/options.ts';
import { expectedFanOutMs, responsesTtlFor } from '../../core/engine/fan-out/responses-ttl.ts';
import { planForks } from '../../core/engine/fan-out/plans.ts';
import { estimateRun } from '../../integrations/economics/estimate.ts';
import type { EstimateInput, RunEstimate } from '../../integrations/economics/estimate-types.ts';
import { formatEstimate } from '../../integrations/economics/estimate-format.ts';
import {
  type Assumptions,
  directiveKind,
  type ForkFacts,
  parseAssumptions,
  profileFork,
} from '../../integrations/economics/estimate-profile.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import { DEFAULT_TOOL_LIMITS } from '../../core/tools/limits.ts';
import { PROVIDERS } from '../../providers/registry.ts';
import type { ProviderId } from '../../core/wire/providers.ts';
import type { ResponsesCacheTtl } from '../../core/wire/cache.ts';
import { dryRunCounts, type DryRunCounts } from './counts.ts';
import { REPO_FIELD } from '../../core/engine/fan-out/repos.ts';
import { filesNamedBy, medianWorkspaceFile, type NamedFile, textSample } from './files.ts';
import { type ApiChoice, type Endpoint, openEndpoint } from '../endpoint.ts';
import type { LoadedPlan } from '../plan/plan.ts';

interface DryRunOptions {
  api: ApiChoice;
  provider: ProviderId;
  catalogue: ModelCatalogue;
  /** `name=value` overrides of the turn assumptions (`--assume`). */
  assume: readonly string[];
  maxUsd?: number | undefined;
  /** The OpenAI wire the run will speak (`--openai-wire` over the plan's `openaiWire`), and its TTL. */
  wire?: Pick<ForkEngineOptions, 'openaiWire' | 'responsesTtl'> | undefined;
}

/** What `--json` prints: the estimate and everything it rests on. */
interface DryRunReport {
  dry_run: true;
  /** A dry run writes no run directory. */
  run_dir: null;
  prefix: { sha256: string; bytes: number; shared_tokens: number };
  counts: DryRunCounts;
  assumptions: Assumptions;
  forks_without_file: number;
  /** The turns each fork is assumed to take (the report's turn included): the estimate scales with them. */
  turns_per_fork: { min: number; max: number; mean: number };
  estimate: RunEstimate;
  /** OpenAI's API the run speaks, when the provider is OpenAI, and the Responses API's TTL. */
  wire?: { api: 'chat' | 'responses'; ttl?: ResponsesCacheTtl };
  max_usd: number | null;
  text: { counted: string[]; assumed: string[] };
}

const n = (x: number): string => Math.round(x).toLocaleString('en-US');
const range = (xs: readonly number[]): string =>
  xs.length === 0
    ? 'none'
    : Math.min(...xs) === Math.max(...xs)
      ? n(xs[0]!)
      : `${n(Math.min(...xs))}–${n(Math.max(...xs))}`;

/**
 * `forkcache run PLAN --dry-run`: freeze the prefix exactly as the run would (the same planning
 * code, the same bytes and hash), count its tokens with the provider's endpoint, and estimate the
 * whole run (src/integrations/economics/estimate.ts). Nothing is sent but token counts; no run directory is written.
 */
export async function dryRun(loaded: LoadedPlan, o: DryRunOptions): Promise<{ report: DryRunReport; text: string }> {
  const { assumptions, error } = parseAssumptions(o.assume);
  if (error) throw new ForkcacheError('INVALID_FLAG', `--assume: ${error}`, { data: { field: '--assume' } });
  // the endpoint first: the engine options name it (no key and no URL is refused); only token
  // counts go to it
  const endpoint = await openEndpoint(o.api, loaded.plan.emulator, o.catalogue, o.provider);
  try {
    return await estimateOn(endpoint, loaded, o, assumptions);
  } finally {
    await endpoint.close();
  }
}

async function estimateOn(
  endpoint: Endpoint,
  loaded: LoadedPlan,
  o: DryRunOptions,
  assumptions: Assumptions,
): Promise<{ report: DryRunReport; text: string }> {
  const { plan, snapshot, workspace, directives } = loaded;
  const options = resolveEngineOptions({
    provider: o.provider,
    baseURL: endpoint.baseURL,
    apiKey: endpoint.apiKey,
    warm: plan.warm,
    layout: plan.layout,
    workspace,
    ...(plan.limits.maxTokens ? { maxTokens: plan.limits.maxTokens } : {}),
    // what decides the Responses API's `auto` TTL, as the run sets it
    ...(plan.limits.maxTurns ? { maxTurns: plan.limits.maxTurns } : {}),
    ...(plan.limits.concurrency ? { concurrency: plan.limits.concurrency } : {}),
    pool: { maxThreads: plan.limits.maxThreads ?? 2 },
    ...o.wire,
  });
  const wire = wireOf(options, o.provider, directives.length);
  const { prefix, specs } = planForks({ options, table: o.catalogue, clock: systemClock }, snapshot, directives, {
    layout: plan.layout,
  });
  const caches = new Map<string, Map<string, NamedFile | null>>();
  const cacheOf = (dir: string): Map<string, NamedFile | null> =>
    caches.get(dir) ?? caches.set(dir, new Map()).get(dir)!;
  // a plan over several repositories: a directive's file is relative to its own repository
  const named = directives.map((d, i) => {
    const repo = plan.repos ? loaded.fields?.[i]?.[REPO_FIELD] : undefined;
    if (repo === undefined) return filesNamedBy(d, workspace, cacheOf(workspace));
    const dir = join(workspace, repo);
    return filesNamedBy(d, dir, cacheOf(dir)).map((f) => ({ ...f, path: `${repo}/${f.path}` }));
  });
  const unnamed = named.filter((files) => files.length === 0).length;
  const median = unnamed > 0 ? medianWorkspaceFile(workspace) : undefined;
  const files = named.map((f) => (f.length > 0 ? f : median ? [median] : []));
  const counts: DryRunCounts = await dryRunCounts({
    prefix,
    children: specs.map((s) => s.base),
    sample: textSample(workspace, files.flat()),
    maxTokens: options.maxTokens,
    provider: o.provider,
    endpoint,
  });
  const pageBytes = DEFAULT_TOOL_LIMITS.maxReadBytes;
  const facts: ForkFacts[] = directives.map((d, i) => ({
    directiveTokens: counts.directives[i] ?? 0,
    kind: directiveKind(d),
    files: files[i]!.map((f) => ({
      path: f.path,
      tokens: Math.ceil(f.chars * counts.perChar),
      pages: Math.max(1, Math.ceil(f.bytes / pageBytes)),
    })),
  }));
  const profiles = facts.map((f) => profileFork(f, assumptions));
  // the estimate's main assumption, named with its number (issue 42: 1.52× low on a fork of 11 turns)
  const turnsPerFork = profiles.map((p) => p.turns.length + 1);
  const turnsMean = turnsPerFork.reduce((a, b) => a + b, 0) / Math.max(1, turnsPerFork.length);
  const estimate = estimateRun({
    model: snapshot.model,
    table: o.catalogue,
    at: Date.now(),
    sharedTokens: counts.shared,
    warm: plan.warm,
    freshHeadTokens: counts.freshHead,
    forks: profiles,
    turnOverhead: assumptions.turnOverhead,
    maxTokens: options.maxTokens,
    ...wire.estimate,
  });
  const distinct = [...new Map(files.flat().map((f) => [f.path, f])).values()];
  const edits = facts.filter((f) => f.kind === 'edit').length;
  const counted = [
    `shared prefix ${n(counts.shared)} tokens (sha256 ${prefix.sha256.slice(0, 16)}: the bytes the run will send), ${counts.how}`,
    `fresh-agent head ${n(counts.freshHead)} tokens (the fallback system prompt and the tools); directives ${range(counts.directives)} tokens each, wrapped`,
    `files: ${n(plan.directives.length - unnamed)} of ${n(plan.directives.length)} directives name a file; ${n(distinct.length)} files, ${range(distinct.map((f) => f.chars * counts.perChar))} tokens each at ${counts.perChar.toFixed(3)} tokens a character (counted on a sample of their text)`,
  ];
  const assumed = [
    plan.warm === 'none'
      ? 'cache: warm "none": no fork waits for another, so every fork is assumed to write the shared prefix'
      : wire.warmUp
        ? `cache: ${wire.warmUp} writes the shared prefix, every fork reads it`
        : plan.warm === 'prewarm'
          ? 'cache: one max_tokens 0 request writes the shared prefix, every fork reads it'
          : 'cache: the first fork writes the shared prefix, the others read it (they wait for its response to begin)',
    ...(wire.line ? [wire.line] : []),
    'cache: each later request of a fork reads the one before and writes its growth; entries live through the run; no retries or failed attempts',
    `turns per fork: ${range(turnsPerFork)} (mean ${turnsMean.toFixed(1)}), the report included; a fork that takes more (a failed check and its retry, a model that reads around) costs more than estimated: each extra turn reads the fork's whole context again`,
    `turns: ${n(edits)} forks edit: read their file (a turn per ${n(pageBytes)} bytes), edit it once${assumptions.verifyRead > 0 ? ', read it again' : ''}, report; ${n(facts.length - edits)} forks read and report`,
    ...(unnamed > 0
      ? [
          median
            ? `${n(unnamed)} directives name no file: each is assumed to read one file of the workspace's median size (${median.path}, ${n(median.chars * counts.perChar)} tokens)`
            : `${n(unnamed)} directives name no file, and the workspace has none: they are assumed to read nothing`,
        ]
      : []),
    `outputs: ${assumptions.toolCallOutput} tokens per tool call, ${assumptions.editOutput} per edit, ${assumptions.reportOutput} per report; results of an edit ${assumptions.editResult}; ${assumptions.turnOverhead} tokens of framing a turn (change any with --assume name=value)`,
    ...(o.maxUsd !== undefined
      ? [
          `--max-usd ${o.maxUsd}: the estimate is ${((100 * estimate.cost.usd) / o.maxUsd).toFixed(0)}% of it; a request in flight holds its input at the cache-write price and its max_tokens (${n(options.maxTokens)}) at the output price: about $${estimate.requestBoundUsd.toFixed(4)} for the largest here`,
        ]
      : []),
  ];
  const report: DryRunReport = {
    dry_run: true,
    run_dir: null,
    prefix: { sha256: prefix.sha256, bytes: prefix.byteLength, shared_tokens: counts.shared },
    counts,
    assumptions,
    forks_without_file: unnamed,
    turns_per_fork: {
      min: Math.min(...turnsPerFork),
      max: Math.max(...turnsPerFork),
      mean: Number(turnsMean.toFixed(2)),
    },
    estimate,
    ...(wire.report ? { wire: wire.report } : {}),
    max_usd: o.maxUsd ?? null,
    text: { counted, assumed },
  };
  const title = `forkcache run --dry-run: ${n(plan.directives.length)} forks of ${snapshot.model}; nothing was sent but ${counts.requests} token counts, and no run directory was written`;
  return { report, text: formatEstimate(estimate, { title, counted, assumed }) };
}

/**
 * What the run's wire changes in the estimate. A Chat Completions fan-out of two forks or more
 * warms first (src/providers/openai/fan-out-warmup.ts: the API has no token count, the warm-up measures the
 * prefix as it writes it): one request, one output token; on the Responses API a `prewarm`, no
 * output, and every write lives for the TTL the run will choose (`responsesTtlFor`), 12 hours
 * priced at the long write rate.
 */
function wireOf(
  options: ResolvedEngineOptions,
  provider: ProviderId,
  forks: number,
): {
  estimate: Partial<Pick<EstimateInput, 'warm' | 'warmupOutput' | 'writeTtl'>>;
  warmUp?: string;
  line?: string;
  report?: { api: 'chat' | 'responses'; ttl?: ResponsesCacheTtl };
} {
  const responses = options.api.wire === 'responses';
  const { chat, responsesApi, ownWarmUp } = PROVIDERS[provider];
  const report = responsesApi ? { report: { api: responses ? ('responses' as const) : ('chat' as const) } } : {};
  // a provider that warms its own way (llama.cpp's slots): its estimate stays as the plan says
  if (!chat || ownWarmUp || options.warm === 'none') return { estimate: {}, ...report };
  const warms = forks > 1;
  if (!responses) {
    return warms
      ? {
          estimate: { warm: 'prewarm', warmupOutput: 1 },
          warmUp: 'one Chat Completions request of one output token (the warm-up, which also measures it)',
          ...report,
        }
      : { estimate: { warm: 'first-child' }, ...report };
  }
  const ttl = responsesTtlFor(options, forks);
  const how =
    options.responsesTtl === 'auto'
      ? `auto: the fan-out is expected to run ${Math.round(expectedFanOutMs(options, forks) / 60_000)} minutes`
      : 'responsesTtl';
  return {
    estimate: { warm: warms ? 'prewarm' : 'first-child', warmupOutput: 0, writeTtl: ttl },
    ...(warms ? { warmUp: 'one Responses API prewarm (prompt_cache_options.prewarm: no output paid)' } : {}),
    line: `wire: OpenAI's Responses API; every write lives ${ttl === '12h' ? '12 hours, priced at the long (1-hour) write rate' : '30 minutes, priced at the short write rate'} (${how})`,
    report: { api: 'responses', ttl },
  };
}
