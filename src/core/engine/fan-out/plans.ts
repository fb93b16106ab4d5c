import type { Clock } from '../../util/clock.ts';
import { ForkcacheError } from '../../util/errors.ts';
import { type AgentType, agentTypeSchema } from '../../agent/agent-type.ts';
import { validateDirective } from '../../fork/directive.ts';
import { FORK_FALLBACK_SYSTEM_PROMPT } from '../../fork/fallback.ts';
import { captureSnapshot, type ParentSnapshot, snapshotOrFallback } from '../../fork/snapshot.ts';
import { findModel, type ModelCatalogue } from '../../models/catalogue.ts';
import { DEFAULT_MODEL } from '../../models/defaults.ts';
import { checkModel } from '../../models/status.ts';
import { unpricedForCap } from './spend.ts';
import { FRESH_START, finishedOutcome, startFromTranscript } from '../../pool/fork-attempts.ts';
import type { ReadOnlyOf } from '../../pool/resume-messages.ts';
import type { LoopPrompt } from '../../loop/types.ts';
import { freeze, type FrozenPrefix } from '../../prefix/freeze.ts';
import { transcriptPath } from '../../run-dir/files.ts';
import { type ManifestEngine, readFanOutDir } from '../../run-dir/manifest.ts';
import { readTranscript } from '../../run-dir/transcript-reader.ts';
import type { RunKey } from '../../run-dir/run-key.ts';
import { TOOL_DECLARATIONS } from '../../tools/declarations.ts';
import type { ExecutableToolName } from '../../wire/tool-names.ts';
import type { ResponsesCacheTtl } from '../../wire/cache.ts';
import { parseOrThrow } from '../../util/validation.ts';
import { type FanOutOptions, type ForkSpec, forkIdOf } from './types.ts';
import type { ResolvedEngineOptions } from '../options.ts';
import { type ForkChecks, resolveForkChecks } from '../fork-checks.ts';
import { assertForkRepos } from './repos.ts';
import type { RetryableStatus } from '../../util/fork-status.ts';
import { retryPrompt } from '../../loop/prompts.ts';
import { responsesTtlFor } from './responses-ttl.ts';
import { outputInstructionOf } from './output.ts';
import { outputInstruction } from '../../fork/output.ts';

/** The Messages API's request size limit (32 MiB): a larger shared prefix can never be sent. */
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/** What planning reads of the engine. */
export interface PlanContext {
  options: Readonly<ResolvedEngineOptions>;
  table: ModelCatalogue;
  clock: Clock;
}

/** What a fan-out runs: the frozen shared head, and each fork's continuation of it. */
interface FanOutPlan {
  prefix: FrozenPrefix;
  specs: ForkSpec[];
  /** The check and fields as the manifest keeps them (resume substitutes them again). */
  checks?: ForkChecks;
}

/**
 * A spend cap in dollars needs prices: a model the catalogue cannot price is refused before
 * anything is sent or written (the fan-out's gates refuse it too, for a resumed run).
 */
function assertCapPriceable(engine: PlanContext, model: string): void {
  if (engine.options.maxUsd === undefined) return;
  const info = findModel(model, engine.table);
  if (!info || info.prices.length === 0) throw unpricedForCap(model, engine.table);
}

/** Forks of a parent (or of the fallback prompt). Bad input throws before anything is sent. */
export function planForks(
  engine: PlanContext,
  parent: ParentSnapshot | undefined,
  directives: readonly string[],
  options: FanOutOptions,
): FanOutPlan {
  // Without a parent the forks run on the fallback prompt, on options.model or the default model.
  const snapshot = snapshotOrFallback(parent, {
    model: options.model ?? DEFAULT_MODEL,
    system: FORK_FALLBACK_SYSTEM_PROMPT,
    tools: TOOL_DECLARATIONS,
  });
  if (!Array.isArray(directives) || directives.length === 0) {
    throw new ForkcacheError('INVALID_OPTION', 'directives: expected a non-empty array of strings', {
      data: { field: 'directives' },
    });
  }
  // A retired model is refused here; an unknown one runs unpriced (the API is the judge).
  checkModel(snapshot.model, { catalogue: engine.table, at: engine.clock.now(), field: 'snapshot.model' });
  assertCapPriceable(engine, snapshot.model);
  const prefix = freeze(snapshot, {
    layout: options.layout ?? engine.options.layout,
    ttl: engine.options.ttl,
    markers: engine.options.markers,
    provider: engine.options.api.provider,
    responses: responsesOf(engine.options, directives.length),
  });
  if (prefix.byteLength > MAX_REQUEST_BYTES) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `snapshot: the shared prefix is ${prefix.byteLength} bytes, over the API's request limit of ${MAX_REQUEST_BYTES} bytes`,
      {
        data: { field: 'snapshot', bytes: prefix.byteLength },
      },
    );
  }
  const checks = resolveForkChecks(directives, options);
  if (engine.options.repos) assertForkRepos(engine.options.repos, checks.fields);
  // typed results: after each directive, where its value goes (the same words for every child)
  const instruction = options.outputSchema ? outputInstructionOf(options.outputSchema) : '';
  const specs: ForkSpec[] = directives.map((d, i) => {
    const directive = validateDirective(d, { field: `directives[${i}]`, rejectTag: true });
    const base = prefix.child(`${directive}${instruction}`, { field: `directives[${i}]` });
    return { directive: d, base, start: FRESH_START(base), ...forkExtras(checks, i) };
  });
  return { prefix, specs, checks };
}

/** The Responses head's options when the engine speaks OpenAI's Responses API, its TTL chosen for this fan-out. */
function responsesOf(options: ResolvedEngineOptions, forks: number): { ttl: ResponsesCacheTtl } | undefined {
  if (options.api.wire !== 'responses') return undefined;
  return { ttl: responsesTtlFor(options, forks) };
}

/** A fork's fields and substituted check, where the fan-out has them. */
function forkExtras(checks: ForkChecks, i: number): Pick<ForkSpec, 'fields' | 'check' | 'judgeChange'> {
  const fields = checks.fields[i];
  const check = checks.commands[i];
  return {
    ...(fields ? { fields } : {}),
    ...(check ? { check } : {}),
    ...(checks.judgeChange[i] ? { judgeChange: true } : {}),
  };
}

/**
 * The plan of a fan-out recorded in its directory: the snapshot must freeze to the same head
 * (hash checked); completed forks are finished, unfinished ones start from their transcripts.
 */
export function planResume(
  dir: string,
  /** The resuming engine's API: the run must have been frozen for it. */
  api: Pick<ResolvedEngineOptions['api'], 'provider' | 'wire'>,
  retry: readonly RetryableStatus[] = [],
  key?: RunKey,
  /** Host tools that only read: an interrupted call of one runs again (fork-attempts.ts). */
  readOnly?: ReadOnlyOf,
  /** A fix-up pass (`ResumeOptions.fixups`): only these forks run, each with its prompt. */
  fixups?: ReadonlyMap<string, LoopPrompt>,
): FanOutPlan & {
  fanOutId: string;
  outputSchema?: Record<string, unknown> | undefined;
  /** The request headers the run was sent with (no credentials): a fan-out's own among them. */
  headers: Record<string, string>;
} {
  const { manifest, snapshot } = readFanOutDir(dir);
  const { provider } = api;
  if (manifest.prefix.provider !== provider) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `resume ${dir}: provider: the run was frozen for ${manifest.prefix.provider}, this engine speaks ${provider}`,
      { data: { field: 'provider' } },
    );
  }
  const prefix = freeze(snapshot, {
    layout: manifest.prefix.layout,
    ttl: manifest.prefix.ttl,
    markers: manifest.prefix.markers,
    provider: manifest.prefix.provider,
    responses: recordedResponses(dir, manifest.engine, api.wire),
  });
  if (prefix.sha256 !== manifest.prefix.sha256) {
    throw new ForkcacheError(
      'FORK_PREFIX_DRIFT',
      `resume ${dir}: the snapshot freezes to ${prefix.sha256.slice(0, 16)}, not the recorded head ${manifest.prefix.sha256.slice(0, 16)}`,
      {
        data: { expected: manifest.prefix.sha256, actual: prefix.sha256 },
      },
    );
  }
  const checks = resolveForkChecks(manifest.directives, {
    check: manifest.check,
    fields: manifest.fields?.map((f) => f ?? {}),
    requireChange: manifest.requireChange,
  });
  // typed results: the same words after each directive as the first run's (a fork not started yet begins from them)
  const instruction = manifest.outputSchema ? outputInstruction(manifest.outputSchema) : '';
  const specs: ForkSpec[] = manifest.directives.map((directive, i) => {
    const base = prefix.child(`${directive}${instruction}`);
    const transcript = readTranscript(transcriptPath(dir, forkIdOf(manifest.fanoutId, i)), 'INVALID_RUN_DIR', key);
    if (transcript.prefixSha256 !== undefined && transcript.prefixSha256 !== prefix.sha256) {
      throw new ForkcacheError(
        'FORK_PREFIX_DRIFT',
        `resume ${dir}: fork ${i + 1}'s transcript was written on another head`,
        { data: { fork: i } },
      );
    }
    const start = transcript.turns.length > 0 ? startFromTranscript(base, transcript, readOnly) : FRESH_START(base);
    const extras = forkExtras(checks, i);
    if (fixups !== undefined) {
      const prompt = fixups.get(forkIdOf(manifest.fanoutId, i));
      if (prompt) return { directive, base, start: { ...start, prompt }, ...extras };
      // not this pass's: as it ended (a failed or capped fork is not continued by a fix-up)
      const ended = finishedOutcome(start, transcript, { continued: true });
      if (ended) return { directive, base, start, finished: ended, ...extras };
    }
    const finished = finishedOutcome(start, transcript);
    // a fork that ended not done is finished, unless the user asked to retry its status
    if (finished && (retry as readonly string[]).includes(finished.status)) {
      const prompt = retryPrompt({ status: finished.status, ...finished.error }, directive);
      return { directive, base, start: { ...start, prompt }, ...extras };
    }
    return { directive, base, start, finished, ...extras };
  });
  return {
    fanOutId: manifest.fanoutId,
    prefix,
    specs,
    checks,
    outputSchema: manifest.outputSchema,
    headers: manifest.engine.headers,
  };
}

/**
 * The Responses options a run's head was frozen with (`manifestEngine` records them), when the
 * resuming engine speaks the same OpenAI API: its requests carry the head as it was frozen.
 */
function recordedResponses(
  dir: string,
  engine: Pick<ManifestEngine, 'openaiWire' | 'responsesTtl'>,
  wire: ResolvedEngineOptions['api']['wire'],
): { ttl: ResponsesCacheTtl } | undefined {
  const recorded = engine.openaiWire ?? 'chat';
  const speaks = wire ?? 'chat';
  if (recorded !== speaks) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `resume ${dir}: openaiWire: the run was frozen for OpenAI's ${recorded === 'responses' ? 'Responses API' : 'Chat Completions'}, this engine speaks ${speaks === 'responses' ? 'the Responses API' : 'Chat Completions'}`,
      { data: { field: 'openaiWire' } },
    );
  }
  if (recorded !== 'responses') return undefined;
  if (!engine.responsesTtl) {
    throw new ForkcacheError(
      'INVALID_RUN_DIR',
      `resume ${dir}: engine.responsesTtl: a run on the Responses API must record the TTL its head was frozen with`,
      { data: { field: 'engine.responsesTtl' } },
    );
  }
  return { ttl: engine.responsesTtl };
}

/** Fresh agents of a type: the type's own system prompt and tools, nothing shared with a parent. */
export function planAgents(
  engine: PlanContext,
  type: AgentType,
  directives: readonly string[],
  options: Pick<FanOutOptions, 'check' | 'fields' | 'requireChange'> = {},
): FanOutPlan & { name: string; allow: readonly ExecutableToolName[] } {
  const agent = parseOrThrow(agentTypeSchema, type, 'INVALID_OPTION', 'agent type');
  const allow = agent.tools ?? [...engine.options.allow];
  const tools = TOOL_DECLARATIONS.filter((t) => (allow as string[]).includes(t.name));
  const snapshot = captureSnapshot({ model: agent.model, system: agent.system, tools, messages: [] });
  checkModel(snapshot.model, {
    catalogue: engine.table,
    at: engine.clock.now(),
    field: `agent type ${agent.name}: model`,
  });
  assertCapPriceable(engine, snapshot.model);
  const prefix = freeze(snapshot, {
    ttl: engine.options.ttl,
    markers: engine.options.markers,
    provider: engine.options.api.provider,
    responses: responsesOf(engine.options, directives.length),
  });
  const checks = resolveForkChecks(directives, options);
  if (engine.options.repos) assertForkRepos(engine.options.repos, checks.fields);
  const specs: ForkSpec[] = directives.map((d, i) => {
    const base = prefix.plan.continuation(validateDirective(d, { field: `directives[${i}]` }).trim());
    return { directive: d, base, start: FRESH_START(base), ...forkExtras(checks, i) };
  });
  return { name: agent.name, allow, prefix, specs, checks };
}
