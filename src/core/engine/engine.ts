import pLimit from 'p-limit';
import { type Clock, systemClock } from '../util/clock.ts';
import { ForkcacheError } from '../util/errors.ts';
import type { ParentSnapshot } from '../fork/snapshot.ts';
import type { PermissionHandler } from '../tools/permissions.ts';
import { type HostTool, parseHostTools } from '../tools/host-tools.ts';
import { UsageLedger } from '../ledger/ledger.ts';
import { BUILTIN_CATALOGUE, findModel, type ModelCatalogue } from '../models/catalogue.ts';
import { AdmissionScheduler, type AdmissionView } from '../gate/admission/scheduler.ts';
import { SpendCap, type SpendCapView } from '../gate/admission/spend-cap.ts';
import type { FrozenPrefix } from '../prefix/freeze.ts';
import type { ProviderAdapter, ProviderConnection } from './provider.ts';
import { registeredProviders } from './providers-registered.ts';
import { FanOutRun } from './fan-out/fan-out.ts';
import type { FanOut } from '../agent/fork-handle.ts';
import type { FanOutDeps, ForkSpec } from './fan-out/types.ts';
import { forkToolsFor } from './fork-tools.ts';
import type { ForkTools } from '../pool/fork-dispatch.ts';
import type { ToolSetChoice } from '../tools/client-tools/types.ts';
import type { FanOutOptions, ResumeOptions } from './fan-out/types.ts';
import type { StandardSchemaV1 } from '../tools/standard-schema.ts';
import type { AgentType } from '../agent/agent-type.ts';
import { AgentTool, type AgentToolOptions } from '../agent/agent-tool.ts';
import type { DistributedBackend } from '../../integrations/distributed/submit/backend.ts';
import { importOptional } from '../util/optional-import.ts';
import { readFanOutDir, writeManifest } from '../run-dir/manifest.ts';
import { openRepos } from './fan-out/repos.ts';
import { fanOutIdsWithBranches } from './fan-out/worktrees.ts';
import { writeSummary } from '../run-dir/writers.ts';
import { loadRunKey } from '../run-dir/run-key.ts';
import { trustFanOutDir, type TrustOptions } from '../run-dir/run-trust.ts';
import { lockRunDir, type WriterLock } from '../run-dir/writer-lock.ts';
import { openFanOutDir, sandboxReportFor } from './fan-out/setup.ts';
import { checkLocalPaths } from './local-paths.ts';
import { type PlanContext, planAgents, planForks, planResume } from './fan-out/plans.ts';
import {
  type EngineSettings,
  type ForkEngineOptions,
  type ResolvedEngineOptions,
  resolveEngineOptions,
} from './options.ts';
import { manifestEngine } from './manifest-engine.ts';
import { parseOrThrow } from '../util/validation.ts';
import { z } from 'zod';
import { jsonSchemaOf, OutputChecks, parseOutputSchema, standardSchemaOfJson } from './fan-out/output.ts';
import { forkWorkerExecArgv, forkWorkerFile } from '../pool/worker-file.ts';
import { ThreadPool } from '../pool/thread-pool.ts';

// The options of one fan-out live with the fan-out's other types.

/** A fan-out's own request headers (`FanOutOptions.headers`): names and values are strings. */
const fanOutHeaders = z.record(z.string(), z.string()).optional();

/**
 * The output schema a resumed fan-out's forks are checked against: the one passed to `resume`
 * (the embedder's own, e.g. a schema with no JSON Schema form), else the JSON Schema its manifest
 * recorded. Retrying `invalid_output` forks with neither is refused: they would end unchecked.
 */
function resumedOutputSchema(
  dir: string,
  options: ResumeOptions,
  recorded: Record<string, unknown> | undefined,
  remote: boolean,
): StandardSchemaV1 | undefined {
  const given = parseOutputSchema(options.outputSchema, remote);
  if (given) return given;
  if (recorded) return standardSchemaOfJson(recorded, `resume ${dir}: manifest outputSchema`);
  if (options.retry?.includes('invalid_output'))
    throw new ForkcacheError(
      'INVALID_OPTION',
      `resume ${dir}: retry: invalid_output forks need the output schema, and this run recorded none (its schema has no JSON Schema form): pass it again (resume(dir, { outputSchema }))`,
      { data: { field: 'retry' } },
    );
  return undefined;
}

/**
 * Runs fork fan-outs on a Piscina pool of worker threads. Every fork's requests start with the
 * same frozen bytes, so siblings hit the prompt cache by construction.
 *
 * @example
 * const engine = await ForkEngine.create({ baseURL: emulator.url, workspace: dir });
 * const fan = engine.fanOut(captureSnapshot(parentRequest), ['rename a to b in x.ts', 'rename a to b in y.ts']);
 * for await (const event of fan) console.log(event.type, event.forkId);
 * const { forks, summary } = await fan.settled();
 * await engine.close();
 */
export class ForkEngine {
  readonly #options: Readonly<ResolvedEngineOptions>;

  /**
   * The resolved options (defaults filled in), the API key (and the job secret) redacted: they
   * are never shown or logged.
   */
  get options(): Readonly<EngineSettings> {
    const { testHooks: _hooks, ...settings } = this.#options;
    const distributed = settings.distributed;
    return {
      ...settings,
      api: { ...settings.api, apiKey: '[redacted]' },
      ...(distributed?.secret ? { distributed: { ...distributed, secret: '[redacted]' } } : {}),
    };
  }
  readonly #pool: ThreadPool;
  /** The engine's provider, as its adapter answers for it (src/providers/<id>/). */
  readonly #provider: ProviderAdapter;
  readonly #connection: ProviderConnection;
  readonly #clock: Clock;
  readonly #table: ModelCatalogue;
  /** What planning a fan-out reads of this engine. */
  readonly #plan: PlanContext;
  readonly #api: ReturnType<typeof pLimit>;
  readonly #slots: ReturnType<typeof pLimit>;
  readonly #admission: AdmissionScheduler;
  readonly #spendCap: SpendCap | undefined;
  readonly #running = new Set<FanOutRun>();
  readonly #onPermission: PermissionHandler | undefined;
  #state: 'open' | 'closing' | 'closed' | 'destroyed' = 'open';
  #sequence = 0;
  /** Fan-out ids whose worktree branches exist already (isolation: 'worktree'): never reused. */
  #branchIds: ReadonlySet<string> = new Set();

  readonly #remote: DistributedBackend | undefined;

  private constructor(
    options: ResolvedEngineOptions,
    input: ForkEngineOptions,
    remote: DistributedBackend | undefined,
  ) {
    this.#remote = remote;
    this.#options = Object.freeze(options);
    this.#clock = input.clock ?? systemClock;
    this.#table = input.modelTable ?? BUILTIN_CATALOGUE;
    this.#onPermission = input.onPermission;
    this.#plan = { options: this.#options, table: this.#table, clock: this.#clock };
    this.#provider = registeredProviders()[options.api.provider];
    this.#connection = this.#provider.connect(options.api, input.client);
    this.#api = pLimit(options.concurrency);
    this.#slots = pLimit(options.maxThreads * options.concurrentTasksPerWorker);
    this.#admission = new AdmissionScheduler({
      clock: this.#clock,
      mode: options.admission,
      retryAfter: options.retryAfter,
    });
    this.#spendCap = options.maxUsd === undefined ? undefined : new SpendCap(options.maxUsd);
    this.#pool = new ThreadPool({
      filename: forkWorkerFile(),
      execArgv: forkWorkerExecArgv(),
      minThreads: options.distributed ? 0 : 1,
      maxThreads: options.maxThreads,
      concurrentTasksPerWorker: options.concurrentTasksPerWorker,
      maxQueue: options.maxQueue,
      resourceLimits: options.resourceLimits,
    });
  }

  /** Validate the options and start the pool. */
  static async create(options: ForkEngineOptions = {}): Promise<ForkEngine> {
    const resolved = resolveEngineOptions(options);
    checkLocalPaths(resolved);
    // bullmq/ioredis load only for a distributed engine: they are optional peer dependencies
    const remote = resolved.distributed
      ? await (
          await importOptional('distributed', () => import('../../integrations/distributed/submit/backend.ts'))
        ).DistributedBackend.connect(
          resolved.distributed,
          resolved.concurrency,
          registeredProviders()[resolved.api.provider].readability,
        )
      : undefined;
    const engine = new ForkEngine(resolved, options, remote);
    // a plan over several repositories: each one is checked before anything is sent (bad input)
    if (resolved.repos) await openRepos(resolved.workspace, resolved.repos);
    if (resolved.isolation === 'worktree')
      engine.#branchIds = await fanOutIdsWithBranches(resolved.workspace, resolved.repos);
    return engine;
  }

  /**
   * Freeze the snapshot's shared head once and run one fork per directive. Bad input throws
   * here, before anything is sent (`directives[3]: a directive must not be empty`).
   */
  fanOut(parent: ParentSnapshot | undefined, directives: readonly string[], options: FanOutOptions = {}): FanOut {
    this.#assertOpen();
    parseHostTools(options.hostTools, 'fanOut options');
    parseOrThrow(fanOutHeaders, options.headers, 'INVALID_OPTION', 'fanOut options.headers');
    const outputSchema = parseOutputSchema(options.outputSchema, this.#remote !== undefined);
    const { prefix, specs, checks } = planForks(this.#plan, parent, directives, options);
    const tools = forkToolsFor(prefix.snapshot, this.#toolChoice(options));
    const { id, runDir, lock } = this.#openRunDir('fo', prefix.id.slice(0, 8));
    // the schema's JSON Schema form, as the children were shown it: resume checks against the same
    const recorded = outputSchema && jsonSchemaOf(outputSchema);
    if (runDir) this.#writeManifest(runDir, id, prefix, directives, options, checks, recorded);
    return this.#start(
      id,
      prefix,
      specs,
      runDir,
      { ...options, requireChange: checks?.requireChange ?? false },
      undefined,
      lock,
      tools,
      outputSchema && new OutputChecks(outputSchema),
    );
  }

  /**
   * Continue a fan-out from its directory (`RUNS_DIR/<fanOutId>`), in this process or after a
   * crash of another: the snapshot must freeze to the same head (hash checked); completed
   * forks are not re-run; unfinished ones go on from their last complete turn, and a tool call
   * that was running when the run stopped is reported to the model as interrupted.
   */
  resume(dir: string, options: ResumeOptions & TrustOptions = {}): FanOut {
    this.#assertOpen();
    parseOrThrow(fanOutHeaders, options.headers, 'INVALID_OPTION', 'resume options.headers');
    readFanOutDir(dir); // not a run directory (no manifest, a malformed one): said before anything is locked
    // one writer at a time, and only what this machine's forkcache signed (docs/security.md)
    const lock = lockRunDir(dir);
    try {
      trustFanOutDir(dir, { trustUnsigned: options.trustUnsigned });
      const host = this.#hostTools(parseHostTools(options.hostTools, 'resume options'));
      // a host tool that only reads and was interrupted runs again; one with effects never does
      const readOnly = (name: string): boolean | undefined =>
        Object.hasOwn(host, name) ? host[name]!.readOnly === true : undefined;
      const { fanOutId, prefix, specs, checks, outputSchema, headers } = planResume(
        dir,
        this.#options.api,
        options.retry,
        loadRunKey(),
        readOnly,
        options.fixups,
      );
      const schema = resumedOutputSchema(dir, options, outputSchema, this.#remote !== undefined);
      const tools = forkToolsFor(prefix.snapshot, this.#toolChoice(options));
      const requireChange = checks?.requireChange ?? false;
      // sent as the first run's were: its headers (a fan-out's own betas among them) over this engine's
      const started = { ...options, requireChange, headers: { ...headers, ...options.headers } };
      const output = schema && new OutputChecks(schema);
      return this.#start(fanOutId, prefix, specs, dir, started, undefined, lock, tools, output);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /**
   * Run fresh agents of an explicit type: each gets the type's own system prompt and tools and
   * the directive as a plain user message. Nothing is shared with the parent (that is what
   * forking is for); the ledger records them as `fresh`, so the difference shows.
   */
  runAgents(
    type: AgentType,
    directives: readonly string[],
    options: Omit<FanOutOptions, 'layout' | 'model'> = {},
  ): FanOut {
    this.#assertOpen();
    if (options.outputSchema !== undefined)
      throw new ForkcacheError('INVALID_OPTION', 'outputSchema: typed results are for forks (fanOut), not agents', {
        data: { field: 'outputSchema' },
      });
    parseOrThrow(fanOutHeaders, options.headers, 'INVALID_OPTION', 'runAgents options.headers');
    const { name, allow, prefix, specs, checks } = planAgents(this.#plan, type, directives, options);
    const { id, runDir, lock } = this.#openRunDir('ag', name.replace(/[^\w-]/g, '_').slice(0, 24));
    if (runDir)
      this.#writeManifest(
        runDir,
        id,
        prefix,
        directives,
        { ...options, meta: { ...options.meta, agentType: name } },
        checks,
      );
    const started = { ...options, requireChange: checks?.requireChange ?? false };
    return this.#start(id, prefix, specs, runDir, started, { kind: 'fresh', type: name, allow }, lock);
  }

  /** The fan-out's tool set and denied tools: its own options over the engine's. */
  #toolChoice(options: {
    toolSet?: ToolSetChoice | undefined;
    denyTools?: readonly string[] | undefined;
    hostTools?: Readonly<Record<string, HostTool>> | undefined;
  }) {
    return {
      toolSet: options.toolSet ?? this.#options.toolSet,
      denyTools: [...new Set([...this.#options.denyTools, ...(options.denyTools ?? [])])],
      // the embedder's handlers run these: preflight counts them as run
      hostToolNames: Object.keys(this.#hostTools(options.hostTools ?? {})),
      remote: this.#options.distributed !== undefined,
    };
  }

  /** The engine's options with a fan-out's own request headers over the engine's (`FanOutOptions.headers`). */
  #withHeaders(headers: FanOutOptions['headers']): ResolvedEngineOptions {
    if (headers === undefined) return this.#options;
    const api = this.#options.api;
    return { ...this.#options, api: { ...api, headers: { ...api.headers, ...headers } } };
  }

  /** The fan-out's manifest (and snapshot), signed with this machine's run key. */
  #writeManifest(
    runDir: string,
    id: string,
    prefix: FrozenPrefix,
    directives: readonly string[],
    options: Pick<FanOutOptions, 'meta' | 'headers'>,
    checks: ReturnType<typeof planForks>['checks'],
    outputSchema?: Record<string, unknown>,
  ): void {
    const forks = { check: checks?.check, fields: checks?.fields, requireChange: checks?.requireChange, outputSchema };
    writeManifest(
      runDir,
      id,
      prefix,
      directives,
      manifestEngine(this.#withHeaders(options.headers), prefix.responses),
      options.meta ?? {},
      forks,
      loadRunKey(),
    );
  }

  /**
   * A fresh fan-out id, its directory created and locked (fan-out-setup.ts). Not one a branch
   * of the repository already uses (`forkcache/<id>-f01`: an earlier run's worktree), nor one
   * another engine wrote in the run directory: transcripts and branches are never shared.
   */
  #openRunDir(kind: 'fo' | 'ag', tag: string): { id: string; runDir: string | undefined; lock?: WriterLock } {
    return openFanOutDir(this.#options.runsDir, () => {
      for (;;) {
        const id = `${kind}${(++this.#sequence).toString().padStart(3, '0')}-${tag}`;
        if (!this.#branchIds.has(id)) return id;
      }
    });
  }

  #start(
    id: string,
    prefix: FrozenPrefix,
    specs: ForkSpec[],
    runDir: string | undefined,
    options: Omit<FanOutOptions, 'layout' | 'model'>,
    agent?: FanOutDeps['agent'],
    lock?: WriterLock,
    tools?: ForkTools,
    output?: OutputChecks,
  ): FanOut {
    const rootId = options.parentId ?? 'parent';
    const ledger = options.ledger ?? new UsageLedger({ table: this.#table });
    if (options.parentUsage) {
      ledger.record({
        forkId: rootId,
        kind: 'parent',
        turn: 0,
        model: prefix.snapshot.model,
        usage: options.parentUsage,
        at: this.#clock.now(),
      });
    }
    const settings = this.#withHeaders(options.headers);
    const headers = options.headers === undefined ? undefined : settings.api.headers;
    const run = new FanOutRun(id, prefix, specs, {
      options: settings,
      pool: this.#pool,
      slots: this.#slots,
      api: this.#api,
      admission: this.#admission,
      spendCap: this.#spendCap,
      modelClass: (model: string) => findModel(model, this.#table)?.family ?? model,
      provider: this.#provider,
      connection: headers ? this.#connection.withHeaders(headers) : this.#connection,
      ledger,
      clock: this.#clock,
      rootId,
      runDir,
      onPermission: this.#onPermission,
      hostTools: this.#hostTools(options.hostTools ?? {}),
      agent,
      foreground: options.foreground,
      requireChange: options.requireChange === true,
      remote: this.#remote,
      // distributed: each host probes and reports its own (`host_sandboxes`), never this machine's
      sandbox: this.#remote ? undefined : sandboxReportFor(this.#options, agent?.allow ?? this.#options.allow),
      tools,
      output,
    });
    if (options.signal) {
      const signal = options.signal;
      const onAbort = (): void => run.cancel();
      if (signal.aborted) run.cancel();
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        void run.settled().then(() => signal.removeEventListener('abort', onAbort));
      }
    }
    this.#running.add(run);
    void run.settled().then(
      (result) => {
        this.#running.delete(run);
        try {
          if (runDir) writeSummary(runDir, result.summary);
        } catch {
          // the summary is also the settled() result: a full disk must not crash the process
        }
        lock?.release();
      },
      () => {
        this.#running.delete(run);
        lock?.release();
      },
    );
    return run;
  }

  /** The engine's host tools with a fan-out's own (which win for a name). */
  #hostTools(own: Readonly<Record<string, HostTool>>): Readonly<Record<string, HostTool>> {
    return { ...this.#options.hostTools, ...own };
  }

  #assertOpen(): void {
    if (this.#state === 'destroyed')
      throw new ForkcacheError('ENGINE_DESTROYED', 'the engine was destroyed: create a new one');
    if (this.#state !== 'open') throw new ForkcacheError('ENGINE_CLOSED', 'the engine is closed: create a new one');
  }

  /** The spend cap now (`maxUsd`): the cap, what was spent, what requests in flight hold; undefined without one. */
  get spendCap(): SpendCapView | undefined {
    return this.#spendCap?.view();
  }

  /** The rate-limit budget now: per model class, the limits learned, what is in use, queued and in flight. */
  get admission(): AdmissionView {
    return this.#admission.view();
  }

  /** The spawn tool for an agent's loop: forks (or fresh agents of a type) behind one tool call. */
  agentTool(options: AgentToolOptions = {}): AgentTool {
    return new AgentTool(this, { clock: this.#clock, ...options });
  }

  /**
   * Wait for every running fan-out and its tasks, then let the threads go: idle, they are kept
   * a while for the next engine made with the same options (src/core/pool/thread-pool.ts) and
   * never keep the process alive. A fan-out that failed does not keep them running: its error
   * is its `settled()`'s to report (issue 25: a run that never exited).
   */
  async close(): Promise<void> {
    if (this.#state === 'closed' || this.#state === 'destroyed') return;
    this.#state = 'closing';
    await Promise.allSettled([...this.#running].map((run) => run.settled()));
    this.#state = 'closed';
    try {
      await this.#pool.close();
    } finally {
      await this.#remote?.close();
    }
  }

  /** Cancel every fork and stop the threads now. */
  async destroy(): Promise<void> {
    this.#state = 'destroyed';
    for (const run of this.#running) run.cancel();
    await this.#pool.destroy();
    await this.#remote?.destroy(); // never waits on Redis: its forks end from their transcripts
  }
}
