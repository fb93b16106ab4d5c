import { z, type ZodType } from 'zod';
import { FORK_LAYOUTS, type ForkLayout } from '../fork/layouts.ts';
import { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS } from '../loop/run-fork.ts';
import { TOOL_SET_NAMES } from '../tools/client-tools/types.ts';
import { CACHE_TTLS, DEFAULT_CACHE_TTL } from '../wire/cache.ts';

/** How the shared prefix is cached before the siblings are released (`engine/warm-gate.ts`). */
export type WarmStrategy = 'first-child' | 'prewarm' | 'none';
export const WARM_STRATEGIES: readonly WarmStrategy[] = ['first-child', 'prewarm', 'none'];

/**
 * What a run's manifest does with a setting, so that `resume` runs as the first run did:
 * - `always`: written every time; a manifest older than the setting reads as its default.
 * - `when-set`: written only when it differs from its default (a run that leaves it alone
 *   writes the manifest an older version wrote); absent reads as the default.
 * - `recorded`: written when set, never read back by `engineOptionsOf`: resume's caller decides
 *   (`maxUsd`: `resume --max-usd` may replace it).
 * - `false`: not kept; a resumed run takes the resuming engine's own.
 */
export type SettingResume = 'always' | 'when-set' | 'recorded' | false;

/**
 * The rule a distributed host applies to a setting its job carries (the subset of
 * `JobRule`, `integrations/distributed/jobs/rules.ts`, that a setting may take): `ceiling`
 * bounds a number by the host's ceiling (clamped or refused), `sandbox` holds the host's
 * floor, `model-input` widens nothing on the host.
 */
export type SettingHostRule =
  | { rule: 'model-input' }
  | { rule: 'sandbox' }
  | { rule: 'ceiling'; ceiling: number; over: 'clamp' | 'refuse'; fallback?: number | undefined };

/** The part of a fork's worker task (`ForkTask`, and the distributed job) a setting travels in, under its own name. */
export type SettingWorkerPart = 'loop' | 'tools';

/** One engine setting's declaration. Every shape it crosses is derived from it. */
export interface SettingDecl<S extends ZodType = ZodType, D = unknown> {
  /** The option's schema (the option is optional: `engineOptionsSchema` adds that). */
  readonly schema: S;
  /** What an absent option resolves to (`undefined`: the setting stays unset). */
  readonly default: D;
  readonly resume: SettingResume;
  /**
   * The setting travels to the fork's worker, as `task[worker][name]` (`DispatchSettings`,
   * `ForkTask`), and so in every distributed job, where its host rule holds it.
   */
  readonly worker?: SettingWorkerPart | undefined;
  /** The host's rule for it in a distributed job: required when it travels to the worker. */
  readonly host?: SettingHostRule | undefined;
  /** Its field in a plan file (`forkcache run PLAN.json`), a path (`limits.maxTurns`); absent: none. */
  readonly plan?: string | undefined;
  /** Older names of the plan field, still read (a plan on disk may carry them). */
  readonly planAliases?: readonly string[] | undefined;
  /**
   * The CLI's flag for it (the CLI's own flag table declares the option; test/cli/command-table.test.ts
   * checks that a command declares this flag, and that a flag overriding the setting's plan field is this one).
   */
  readonly flag?: string | undefined;
  /** One line, as `forkcache run --help` prints the plan field. */
  readonly help?: string | undefined;
}

const positive = z.number().int().positive();

/** Declares one setting, keeping its schema's and its default's types (its default checked against its schema). */
function setting<const T extends SettingDecl<ZodType, unknown>>(
  decl: T & { default: z.output<T['schema']> | undefined } & (
      { worker?: undefined } | { worker: SettingWorkerPart; host: SettingHostRule }
    ),
): T {
  return decl;
}

/**
 * The engine's settings: one declaration each, and every shape on its way derived from it:
 * the option in `ForkEngineOptions` and its schema, its resolved field and default
 * (`engine/options.ts`), the manifest's field and what resume reads back
 * (`engine/manifest-engine.ts`, `run-dir/manifest.ts`), the worker's task and
 * `DispatchSettings` (`pool/`), the distributed job's field and its host rule
 * (`integrations/distributed/jobs/`), the plan's field. One name everywhere: the declared one.
 * CONTRIBUTING.md, "Adding an engine setting".
 *
 * Settings with a shape of their own stay hand-written in `engine/options.ts` (the endpoint,
 * the pool, the workspace and runs directory, the retry policies, permissions, tool limits);
 * the tools' boolean flags (`network`) are declared in `tools/tool-flags.ts`.
 */
export const ENGINE_SETTINGS = {
  /** Model calls per fork (default 200). */
  maxTurns: setting({
    schema: positive,
    default: DEFAULT_MAX_TURNS,
    resume: 'always',
    worker: 'loop',
    host: { rule: 'ceiling', ceiling: 500, over: 'clamp' },
    plan: 'limits.maxTurns',
    help: `model calls per fork (default ${DEFAULT_MAX_TURNS})`,
  }),
  /** `max_tokens` of every request (default 8192). */
  maxTokens: setting({
    schema: positive,
    default: DEFAULT_MAX_TOKENS,
    resume: 'always',
    worker: 'loop',
    host: { rule: 'ceiling', ceiling: 128_000, over: 'clamp' },
    plan: 'limits.maxTokens',
    help: `max_tokens of every request (default ${DEFAULT_MAX_TOKENS})`,
  }),
  /** API requests in flight at most, across every fork (default 16). */
  concurrency: setting({
    schema: positive,
    default: 16,
    resume: 'always',
    plan: 'limits.concurrency',
    help: 'API requests in flight at most (default 16)',
  }),
  /**
   * Rate-limit admission (default `on`): every request reserves its predicted ITPM, RPM and
   * OTPM from budgets learned from the API's `anthropic-ratelimit-*` headers, a 429 or 529
   * holds the whole engine for one backoff, `ramp_limit_exceeded` slows the ramp, and the spend
   * cap stops admission (forks stop after their turn, resumable): the scheduler owns the
   * retries of 429s and 529s. `off`: no admission; a turn that gets one retries on its own
   * (`turnRetry`, its backoff at least the `retry-after`, at most `maxMs`).
   */
  admission: setting({ schema: z.enum(['on', 'off']), default: 'on', resume: false }),
  /** How the shared prefix is cached before the siblings are released (default `first-child`). */
  warm: setting({
    schema: z.enum(WARM_STRATEGIES as [WarmStrategy, ...WarmStrategy[]]),
    default: 'first-child',
    resume: 'always',
    plan: 'warm',
    help: 'how the shared prefix is cached before siblings are released',
  }),
  /** llama.cpp: most bytes a fan-out's slot files may hold at once (default 4 GiB); past it the least recently used fork computes its own turns again. */
  slotFilesMaxBytes: setting({ schema: positive, default: undefined, resume: false }),
  /** Lifetime of the shared-boundary marker (default 5m). */
  ttl: setting({ schema: z.enum(CACHE_TTLS), default: DEFAULT_CACHE_TTL, resume: false }),
  /** How a fork continues the parent's messages (default `claude`). */
  layout: setting({
    schema: z.enum(FORK_LAYOUTS as [ForkLayout, ...ForkLayout[]]),
    default: 'claude',
    resume: false,
    plan: 'layout',
    help: "how a fork continues the parent's messages",
  }),
  /**
   * Whose tools the forks run: `auto` (default) from the parent's declared array, or one of
   * `forkcache`, `claude-code`, `qwen-code` (docs/real-clients.md).
   */
  toolSet: setting({
    schema: z.enum(['auto', ...TOOL_SET_NAMES]),
    default: 'auto',
    resume: 'when-set',
    plan: 'toolSet',
    help: "whose tools the forks run: auto (from the parent's declared array), forkcache, claude-code, qwen-code",
  }),
  /** Tools of the parent's array refused in forks on purpose: the model is told, and preflight accepts them. */
  denyTools: setting({
    schema: z.array(z.string().min(1)),
    default: [],
    resume: 'when-set',
    plan: 'denyTools',
    help: "tools of the parent's array refused in forks on purpose (the model is told; the run may start)",
  }),
  /** Where `bash` runs: `auto` (default) uses bubblewrap when it works here, `none` never does. */
  sandbox: setting({
    schema: z.enum(['auto', 'bwrap', 'none']),
    default: 'auto',
    resume: 'always',
    worker: 'tools',
    host: { rule: 'sandbox' },
    plan: 'sandbox',
    help: 'where bash and the check run: auto (bubblewrap when it works here), bwrap (required), none',
  }),
  /** Times a fork continues on a fresh worker after its worker died (default 2). */
  maxWorkerRestarts: setting({ schema: z.number().int().min(0).max(10), default: 2, resume: false }),
  /**
   * `worktree`: each fork works in its own git worktree on a branch `forkcache/<forkId>`
   * (under the run directory; needs `runsDir` and a workspace in a git repository), so parallel
   * forks editing one repository never collide. The result names the branch and the diff stat.
   */
  isolation: setting({
    schema: z.enum(['none', 'worktree']),
    default: 'none',
    resume: 'always',
    plan: 'isolation',
    flag: '--isolation',
    help: '`worktree`: each fork in its own git worktree and branch (the workspace must be a git repository)',
  }),
  /**
   * Under `isolation: 'worktree'`: a fork whose directive has a `file` field gets a worktree
   * holding that file only (the rest of the tree stays in git's index, unchanged by the commit).
   * For directives about one file whose check needs no other; a fork cannot read other files.
   */
  sparseWorktrees: setting({
    schema: z.boolean(),
    default: false,
    resume: 'when-set',
    plan: 'sparseWorktrees',
    planAliases: ['sparse'],
    flag: '--sparse',
    help: "with isolation worktree: each fork's worktree holds only its directive's `file` (less disk, faster; the fork and its check see no other file)",
  }),
  /**
   * Under `isolation: 'worktree'`: whole (not sparse) worktrees that exist at once; a fork
   * waits for one before it starts. Default: as many as take at most twice the repository
   * (its checkout and git dir), so the run's peak disk stays under three times it.
   */
  maxWorktrees: setting({
    schema: positive,
    default: undefined,
    resume: 'when-set',
    plan: 'limits.maxWorktrees',
    help: 'isolation worktree: whole worktrees at once (default: what keeps the disk under 3× the repository)',
  }),
  /**
   * A spend cap in USD over everything this engine sends (and what a resumed run spent before):
   * a request is admitted only while the ledger plus every request in flight at its upper bound
   * stays within it; then admission stops, forks end `SPEND_CAP_MAX_USD` after their last
   * complete turn, and `resume` continues under a higher cap. Not with `distributed`.
   */
  maxUsd: setting({
    schema: z.number().positive().finite().max(1_000_000),
    default: undefined,
    resume: 'recorded',
    plan: 'maxUsd',
    flag: '--max-usd',
    help: 'a client-side spend cap in USD for the whole run, every pass of it (`--max-usd` overrides)',
  }),
};

export type EngineSettingsTable = typeof ENGINE_SETTINGS;
export type SettingName = keyof EngineSettingsTable;
export const SETTING_NAMES = Object.keys(ENGINE_SETTINGS) as SettingName[];

type ValueOf<K extends SettingName> = z.output<EngineSettingsTable[K]['schema']>;
type DefaultOf<K extends SettingName> = EngineSettingsTable[K]['default'];

/** The settings as options (`ForkEngineOptions`): each optional, as its schema takes it. */
export type SettingOptions = { [K in SettingName]?: z.input<EngineSettingsTable[K]['schema']> | undefined };

/** The settings resolved: each its value, or its default; `undefined` only where the default is. */
export type ResolvedSettings = {
  [K in SettingName]: undefined extends DefaultOf<K> ? ValueOf<K> | undefined : ValueOf<K>;
};

type NamesWhere<P> = { [K in SettingName]: EngineSettingsTable[K] extends P ? K : never }[SettingName];

/** The settings that travel to a fork's worker in `part` of its task. */
export type WorkerSettingName<P extends SettingWorkerPart> = NamesWhere<{ worker: P }>;
type UnsetByDefault = { [K in SettingName]: undefined extends DefaultOf<K> ? K : never }[SettingName];
/**
 * Their fields in the task and the job: one without a default is absent while unset, so a job
 * that does not set it is the job an older submitter sent.
 */
export type WorkerSettings<P extends SettingWorkerPart> = Pick<
  ResolvedSettings,
  Exclude<WorkerSettingName<P>, UnsetByDefault>
> & { [K in Extract<WorkerSettingName<P>, UnsetByDefault>]?: ValueOf<K> | undefined };

/** The settings a manifest keeps (every mode but `false`). */
type KeptSettingName = NamesWhere<{ resume: 'always' | 'when-set' | 'recorded' }>;
type AlwaysKept = NamesWhere<{ resume: 'always' }>;
/** The manifest's fields of the kept settings (`always`: present once read, defaulted for older runs). */
type ManifestSettings = { [K in AlwaysKept]: ValueOf<K> } & {
  [K in Exclude<KeptSettingName, AlwaysKept>]?: ValueOf<K> | undefined;
};

const entries = () => Object.entries(ENGINE_SETTINGS) as [SettingName, SettingDecl][];
const fromEntries = <T>(pairs: [string, unknown][]) => Object.fromEntries(pairs) as T;

/** One optional schema field per setting, for `engineOptionsSchema`. */
export function settingOptionShape(): { [K in SettingName]: z.ZodOptional<EngineSettingsTable[K]['schema']> } {
  return fromEntries(entries().map(([name, s]) => [name, s.schema.optional()]));
}

const copy = <T>(value: T): T => (Array.isArray(value) ? ([...value] as T) : value);

/** Every setting, as given or its default (an array default copied, never shared). */
export function resolveSettings(options: Readonly<SettingOptions>): ResolvedSettings {
  return fromEntries(entries().map(([name, s]) => [name, options[name] ?? copy(s.default)]));
}

/** The manifest's field of every kept setting: `always` with its default (an older run's manifest has none), else optional. */
type ManifestSettingShape = { [K in AlwaysKept]: z.ZodDefault<EngineSettingsTable[K]['schema']> } & {
  [K in Exclude<KeptSettingName, AlwaysKept>]: z.ZodOptional<EngineSettingsTable[K]['schema']>;
};

export function manifestSettingShape(): ManifestSettingShape {
  return fromEntries(
    entries().flatMap(([name, s]) =>
      s.resume === false
        ? []
        : [[name, s.resume === 'always' ? s.schema.default(s.default as never) : s.schema.optional()]],
    ),
  );
}

const sameAs = (value: unknown, fallback: unknown) => JSON.stringify(value) === JSON.stringify(fallback);

/** What the manifest keeps of the resolved settings: `always` ones whole, the others only when set (not their default). */
export function keptSettings(resolved: Readonly<ResolvedSettings>): ManifestSettings {
  return fromEntries(
    entries().flatMap(([name, s]) => {
      const value: unknown = resolved[name];
      if (s.resume === false || value === undefined) return [];
      if (s.resume !== 'always' && sameAs(value, s.default)) return [];
      return [[name, copy(value)]];
    }),
  );
}

/** The options a resumed run starts from, read back from the manifest's fields (`recorded` ones are the caller's). */
export function settingsFromManifest(kept: Readonly<Partial<ManifestSettings>>): SettingOptions {
  return fromEntries(
    entries().flatMap(([name, s]) => {
      const value: unknown = (kept as Record<string, unknown>)[name];
      return s.resume === false || s.resume === 'recorded' || value === undefined ? [] : [[name, value]];
    }),
  );
}

/** The settings that travel in `part` of a fork's worker task (and its distributed job), by name; an unset one is left out. */
export function workerSettings<P extends SettingWorkerPart>(
  resolved: Readonly<WorkerSettings<P>>,
  part: P,
): WorkerSettings<P> {
  return fromEntries(
    entries().flatMap(([name, s]) => {
      const value = (resolved as Record<string, unknown>)[name];
      return s.worker === part && value !== undefined ? [[name, value]] : [];
    }),
  );
}

/** The host rule of every setting that travels in `part` of a job (`JOB_RULES`). */
export function settingHostRules<P extends SettingWorkerPart>(
  part: P,
): { [K in WorkerSettingName<P>]: SettingHostRule } {
  return fromEntries(entries().flatMap(([name, s]) => (s.worker === part && s.host ? [[name, s.host]] : [])));
}
