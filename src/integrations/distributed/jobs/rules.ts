import { ForkcacheError } from '../../../core/util/errors.ts';
import { DEFAULT_RETRY_BUDGET_MS } from '../../../core/loop/retry.ts';
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from '../../../core/tools/limits.ts';
import { TOOL_FLAG_NAMES } from '../../../core/tools/tool-flags.ts';
import type { ForkJobData } from '../keys.ts';
import { settingHostRules } from '../../../core/settings/engine-settings.ts';

/**
 * The one list of what a job carries and which rule of its host's policy holds each field.
 * A host walks every job through it before anything runs: a field the list does not name is
 * refused (a newer submitter's field this host has no rule for runs nothing), so no field can
 * reach a fork unchecked. The type makes the list complete for `ForkJobData` at compile time;
 * `test/integrations/distributed/job-rules.test.ts` checks it against a real job at run time.
 */
export type JobRule =
  /** Names the job (bound by its signature): checked against the job id, or used only to look things up. */
  | { rule: 'identity' }
  /** What the model reads, or the form of the loop: runs nothing on the host and sets no limit. */
  | { rule: 'model-input' }
  /** The provider picks the host's own endpoint and key; the job's `baseURL` must be that endpoint. */
  | { rule: 'endpoint' }
  /** Sent with each request, every credential header dropped. */
  | { rule: 'headers' }
  /** A tool the host does not allow is refused; `bash` also needs a sandbox the host can apply. */
  | { rule: 'tools' }
  /** At least the host's sandbox floor (`none` < `auto` < `bwrap`). */
  | { rule: 'sandbox' }
  /**
   * A tool flag (`tools/tool-flags.ts`) that lets a fork do more: a job turning it on runs
   * only on a host whose policy allows that flag (`HostPolicyOptions`, the flag's own name:
   * `network` is `forkcache worker --allow-network`). A flag that only changes what the model
   * reads, and widens nothing on the host, may take `model-input` instead: that is the choice
   * the list makes explicit for every flag.
   */
  | { rule: 'host-flag' }
  /** The host tools the forks call, by name: every one registered on this host (`--host-tools`). */
  | { rule: 'host-tools' }
  /** Every decision the stricter of the job's and the host's. */
  | { rule: 'permissions' }
  /** Under one of the host's roots (real path: symlinks resolved). */
  | { rule: 'root' }
  /** A command the job names: run only where the host allows bash, in the job's sandbox (at least the floor). */
  | { rule: 'command' }
  /** Adds the shared rate-limit budget's gate to the host's requests; takes nothing away. */
  | { rule: 'budget' }
  /**
   * A number bounded by the host's ceiling (`ceilings[path]`, else `ceiling`): above it the
   * job is clamped to it (`clamp`, said in the host's log and the fork's host report) or
   * refused (`refuse`). `fallback` is what an absent field means (the engine's default), so a
   * ceiling below the default holds for jobs that leave the field out.
   */
  | { rule: 'ceiling'; ceiling: number; over: 'clamp' | 'refuse'; fallback?: number | undefined };

/**
 * A rule for every field of `T`, at every depth (`-?`: optional fields too). An object may
 * take one rule for the whole of it or a rule per field; a boolean, a number or a string takes
 * a rule, never a value of its own type.
 */
export type RuleTree<T> = {
  readonly [K in keyof T]-?: NonNullable<T[K]> extends object ? JobRule | RuleTree<NonNullable<T[K]>> : JobRule;
};

const identity = { rule: 'identity' } as const;
const modelInput = { rule: 'model-input' } as const;
const clamp = (ceiling: number, fallback?: number): JobRule => ({ rule: 'ceiling', ceiling, over: 'clamp', fallback });
const MIN = 60_000;
const MIB = 1024 * 1024;

/** Ceilings of the tool limits: generous over the defaults, so a plan's raised limits still run unchanged. */
const TOOL_LIMIT_RULES: RuleTree<ToolLimits> = {
  maxReadBytes: clamp(4 * MIB, DEFAULT_TOOL_LIMITS.maxReadBytes),
  maxEditBytes: clamp(16 * MIB, DEFAULT_TOOL_LIMITS.maxEditBytes),
  maxGrepFileBytes: clamp(16 * MIB, DEFAULT_TOOL_LIMITS.maxGrepFileBytes),
  maxGrepMatches: clamp(5_000, DEFAULT_TOOL_LIMITS.maxGrepMatches),
  maxLineChars: clamp(10_000, DEFAULT_TOOL_LIMITS.maxLineChars),
  maxGlobResults: clamp(20_000, DEFAULT_TOOL_LIMITS.maxGlobResults),
  maxListEntries: clamp(20_000, DEFAULT_TOOL_LIMITS.maxListEntries),
  maxWalkEntries: clamp(1_000_000, DEFAULT_TOOL_LIMITS.maxWalkEntries),
  toolTimeoutMs: clamp(10 * MIN, DEFAULT_TOOL_LIMITS.toolTimeoutMs),
  bashTimeoutMs: clamp(10 * MIN, DEFAULT_TOOL_LIMITS.bashTimeoutMs),
  maxBashOutputBytes: clamp(1 * MIB, DEFAULT_TOOL_LIMITS.maxBashOutputBytes),
  bashMaxProcesses: clamp(1024, DEFAULT_TOOL_LIMITS.bashMaxProcesses),
  bashMaxMemoryMb: clamp(8192, DEFAULT_TOOL_LIMITS.bashMaxMemoryMb),
  bashMaxFileMb: clamp(4096, DEFAULT_TOOL_LIMITS.bashMaxFileMb),
  bashTmpMb: clamp(2048, DEFAULT_TOOL_LIMITS.bashTmpMb),
  maxWorkspaceMb: clamp(16_384, DEFAULT_TOOL_LIMITS.maxWorkspaceMb),
};

export const JOB_RULES: RuleTree<ForkJobData> = {
  v: identity,
  fanoutId: identity,
  forkId: identity,
  index: identity,
  prefixSha256: identity,
  base: modelInput,
  prompt: modelInput,
  api: {
    provider: { rule: 'endpoint' },
    // OpenAI's Responses API: the head was frozen for it, so it goes with the endpoint
    wire: { rule: 'endpoint' },
    baseURL: { rule: 'endpoint' },
    headers: { rule: 'headers' },
    maxRetries: clamp(10),
    timeoutMs: clamp(30 * MIN),
  },
  loop: {
    // the declared settings that travel in the loop (`maxTurns` …) take the rule their declaration gives
    ...settingHostRules('loop'),
    querySource: modelInput,
    marker: modelInput,
    retry: {
      retries: clamp(10),
      baseMs: clamp(MIN),
      maxMs: clamp(10 * MIN),
      budgetMs: clamp(60 * MIN, DEFAULT_RETRY_BUDGET_MS),
    },
    gateRetries: { rule: 'budget' },
    requireReport: modelInput,
    judgeChange: modelInput,
    check: {
      command: { rule: 'command' },
      retries: clamp(10),
      timeoutMs: clamp(30 * MIN),
      // only lists what the check created, for the commit to leave out: widens nothing on the host
      trackOutputs: modelInput,
    },
  },
  admission: { rule: 'budget' },
  tools: {
    workspace: { rule: 'root' },
    allow: { rule: 'tools' },
    limits: TOOL_LIMIT_RULES,
    ...settingHostRules('tools'),
    network: { rule: 'host-flag' },
    host: { rule: 'host-tools' },
  },
  permissions: { rule: 'permissions' },
  transcriptPath: { rule: 'root' },
};

const isRule = (node: JobRule | object): node is JobRule => typeof (node as { rule?: unknown }).rule === 'string';

/** Every field path of the list with its rule, in order (`tools.limits.bashTmpMb`, …). */
export function jobRuleList(tree: object = JOB_RULES, prefix = ''): [string, JobRule][] {
  return Object.entries(tree).flatMap(([key, node]: [string, JobRule | object]) =>
    isRule(node) ? [[`${prefix}${key}`, node] as [string, JobRule]] : jobRuleList(node, `${prefix}${key}.`),
  );
}

/**
 * The tool flags a job may turn on only where its host allows them (rule `host-flag`): each is
 * a host policy option of its own name and `forkcache worker --allow-<flag>`.
 */
export const HOST_FLAGS = TOOL_FLAG_NAMES.filter((name) =>
  jobRuleList().some(([path, rule]) => path === `tools.${name}` && rule.rule === 'host-flag'),
);

/** The ceiling paths and their defaults: what `forkcache worker --ceiling PATH=N` may set. */
export function defaultCeilings(): Record<string, number> {
  return Object.fromEntries(
    jobRuleList().flatMap(([path, rule]) => (rule.rule === 'ceiling' ? [[path, rule.ceiling] as const] : [])),
  );
}

function refuse(field: string, message: string): never {
  throw new ForkcacheError('JOB_POLICY_REFUSED', `${field}: ${message}`, { data: { field } });
}

interface RuledJob {
  /** The job with every ceiling applied. */
  data: ForkJobData;
  /** What was clamped, one `path: asked → allowed` each. */
  clamped: string[];
}

/**
 * Walk a job through the list: a field without a rule is refused, every ceiling applied
 * (clamped or refused). The other rules are the host policy's (`applyHostPolicy`), each on
 * the field the list gives it.
 * @throws ForkcacheError `JOB_POLICY_REFUSED` naming the field.
 */
export function applyJobRules(data: ForkJobData, ceilings: Readonly<Record<string, number>> = {}): RuledJob {
  const clamped: string[] = [];
  const walk = (value: Record<string, unknown>, tree: object, prefix: string): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...value };
    const rules = tree as Record<string, JobRule | object>;
    for (const key of Object.keys(value))
      if (!Object.hasOwn(rules, key) && value[key] !== undefined)
        refuse(`${prefix}${key}`, 'this host has no policy rule for this field, so it runs no job that carries it');
    for (const [key, node] of Object.entries(rules)) {
      const path = `${prefix}${key}`;
      const field = value[key];
      if (!isRule(node)) {
        if (field === undefined) continue;
        if (typeof field !== 'object' || field === null || Array.isArray(field)) refuse(path, 'expected an object');
        out[key] = walk(field as Record<string, unknown>, node, `${path}.`);
        continue;
      }
      if (node.rule !== 'ceiling') continue;
      const ceiling = ceilings[path] ?? node.ceiling;
      const asked = field ?? node.fallback;
      if (asked === undefined) continue;
      if (typeof asked !== 'number' || !Number.isFinite(asked) || asked < 0) refuse(path, 'expected a number');
      if (asked <= ceiling) continue;
      if (node.over === 'refuse') refuse(path, `the job asks for ${asked}, this host allows at most ${ceiling}`);
      out[key] = ceiling;
      clamped.push(`${path}: ${asked} → ${ceiling}`);
    }
    return out;
  };
  return { data: walk(data as unknown as Record<string, unknown>, JOB_RULES, '') as unknown as ForkJobData, clamped };
}

/** A `--ceiling PATH=N` flag's value, checked against the list of ceilings. */
export function parseCeiling(text: string): [string, number] {
  const known = defaultCeilings();
  const match = /^([\w.]+)=(\d+)$/.exec(text.trim());
  if (!match || !Object.hasOwn(known, match[1]!))
    throw new ForkcacheError(
      'INVALID_FLAG',
      `--ceiling: expected PATH=N with PATH among ${Object.keys(known).join(', ')}, got ${JSON.stringify(text)}`,
      { data: { field: '--ceiling' } },
    );
  return [match[1]!, Number(match[2])];
}
