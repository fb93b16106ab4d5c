import { realpathSync } from 'node:fs';
import { basename, dirname, resolve, sep } from 'node:path';
import { ForkcacheError } from '../../../core/util/errors.ts';
import type { ForkTask } from '../../../core/pool/protocol.ts';
import { withoutCredentials } from '../../../core/wire/headers.ts';
import { decide, type PermissionDecision, type PermissionPolicy } from '../../../core/tools/permissions.ts';
import type { SandboxChoice } from '../../../core/tools/sandbox/types.ts';
import type { HostToolInfo } from '../../../core/tools/host-tools.ts';
import { endpointFromEnv, type ProviderId, providerWireOf } from '../../../core/wire/providers.ts';
import { type ExecutableToolName, FILE_TOOL_NAMES } from '../../../core/wire/tool-names.ts';
import { TOOL_FLAGS, type ToolFlagName, toolFlagsOf } from '../../../core/tools/tool-flags.ts';
import { applyJobRules, HOST_FLAGS } from '../jobs/rules.ts';
import type { ForkJobData } from '../keys.ts';

/**
 * For each tool flag of rule `host-flag` (`job-rules.ts`): jobs may turn it on here (default
 * false). `network`: jobs may ask for a sandbox with network access (`--allow-network`).
 */
type HostFlagAllowances = { readonly [K in ToolFlagName]?: boolean | undefined };

/**
 * What a host lets its jobs do, from its own configuration. A signed job comes from a
 * submitter holding the secret, but a host never takes its endpoint or its ceiling from the
 * job alone: a job may narrow the policy (fewer tools, a stricter sandbox or permission),
 * never widen it; asking for more is refused before anything runs.
 */
export interface HostPolicyOptions extends HostFlagAllowances {
  /** Tools a job may allow. Default: the file tools; `bash` only when listed. */
  allow?: readonly ExecutableToolName[] | undefined;
  /** The weakest sandbox a job may ask `bash` to run in (`none` < `auto` < `bwrap`). Default `auto`. */
  sandbox?: SandboxChoice | undefined;
  /** Combined with each job's permissions: for every tool the stricter decision wins (deny > ask > allow). */
  permissions?: PermissionPolicy | undefined;
  /** Jobs' workspaces and transcripts must lie under one of these directories. Default: anywhere. */
  roots?: readonly string[] | undefined;
  /** This host's API endpoint for every provider. Default: the provider's variable (`ANTHROPIC_BASE_URL`, `DASHSCOPE_BASE_URL`, …), else its public endpoint. */
  baseURL?: string | undefined;
  /** This host's API key (never in Redis). Default: the provider's key variable. */
  apiKey?: string | undefined;
  /** Ceilings by job field path (`tools.limits.bashTmpMb`, `loop.maxTurns`, …; `job-rules.ts`), over the defaults there. */
  ceilings?: Readonly<Record<string, number>> | undefined;
  /** The host tools this host registered (`--host-tools`): a job needing another is refused. */
  registeredTools?: readonly HostToolInfo[] | undefined;
}

/** What the host found on itself at start, that its policy depends on. */
export interface HostFacts {
  /** Why bash cannot be sandboxed here while the floor asks for a sandbox (no working bubblewrap); undefined: it can, or the floor is `none`. */
  sandboxMissing?: string | undefined;
}

/** The settings a job's fork runs with on this host, and what its ceilings clamped. */
export type HostSettings = Pick<ForkTask, 'api' | 'loop' | 'tools' | 'permissions'> & { clamped: string[] };

interface HostEndpoint {
  baseURL: string;
  apiKey: string;
  /** Where the base URL came from, for the refusal message. */
  source: string;
}

/** The endpoint this host sends a provider's requests to, and the key it sends. */
function hostEndpoint(provider: ProviderId, options: HostPolicyOptions): HostEndpoint {
  const { endpoint } = providerWireOf(provider);
  const env = endpointFromEnv(endpoint);
  return {
    baseURL: options.baseURL ?? env.baseURL,
    apiKey: options.apiKey || env.apiKey || 'no-key',
    source: options.baseURL ? 'its baseURL option' : (env.baseUrlFrom ?? `the ${endpoint.title} default`),
  };
}

/** An endpoint as compared: origin and path, no trailing slash (`http://h:1/v1/` is `http://h:1/v1`). */
function endpointOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return undefined;
  }
}

const SANDBOX_RANK: Record<SandboxChoice, number> = { none: 0, auto: 1, bwrap: 2 };
const DECISION_RANK: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 };
const stricter = (a: PermissionDecision, b: PermissionDecision): PermissionDecision =>
  DECISION_RANK[a] >= DECISION_RANK[b] ? a : b;

/** The job's permissions under the host's: every decision the stricter of the two. */
export function narrowPermissions(job: PermissionPolicy, host: PermissionPolicy): PermissionPolicy {
  const names = new Set([...Object.keys(job.tools ?? {}), ...Object.keys(host.tools ?? {})]);
  return {
    default: stricter(job.default ?? 'allow', host.default ?? 'allow'),
    tools: Object.fromEntries([...names].map((name) => [name, stricter(decide(job, name), decide(host, name))])),
  };
}

function refuse(field: string, message: string): never {
  throw new ForkcacheError('JOB_POLICY_REFUSED', `${field}: ${message}`, { data: { field } });
}

/** The rule `identity`: the fields naming the job agree with its (signed) id. */
function checkIdentity(data: ForkJobData, jobId: string | undefined): void {
  if (data.v !== 1) refuse('v', `this host runs jobs of version 1, not ${JSON.stringify(data.v)}`);
  if (typeof data.forkId !== 'string' || (jobId !== undefined && !jobId.startsWith(`${data.forkId}.`)))
    refuse('forkId', `${JSON.stringify(data.forkId)} is not the fork job ${jobId ?? '?'} names`);
  if (data.fanoutId !== data.forkId.replace(/-f\d+$/, ''))
    refuse('fanoutId', `${JSON.stringify(data.fanoutId)} is not the fan-out of ${data.forkId}`);
  if (!Number.isInteger(data.index) || data.index < 0) refuse('index', 'expected a fork index');
  if (typeof data.prefixSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(data.prefixSha256))
    refuse('prefixSha256', 'expected a sha256 in hex');
}

/** Why `bash` (or a check) cannot run here: the host allows no bash, or it has no sandbox it may use. */
function bashRefusal(options: HostPolicyOptions, facts: HostFacts): string | undefined {
  const ceiling = options.allow ?? FILE_TOOL_NAMES;
  if (!(ceiling as readonly string[]).includes('bash'))
    return `this host does not allow bash (it allows ${ceiling.join(', ') || 'none'}), so it runs no command a job names`;
  if (facts.sandboxMissing !== undefined)
    return `bash is NOT sandboxed on this host (${facts.sandboxMissing}) and its policy asks for a sandbox ("${options.sandbox ?? 'auto'}"): it runs no command a job names; install bubblewrap, or start the host with --sandbox none to run them with its own rights`;
  return undefined;
}

/** The real path of `path` (or of its nearest existing parent), to compare with the roots. */
function realish(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : resolve(realish(parent), basename(path));
  }
}

function checkRoot(field: string, path: string, roots: readonly string[]): void {
  const real = realish(resolve(path));
  const inside = roots.some((root) => {
    const top = realish(resolve(root));
    return real === top || real.startsWith(top.endsWith(sep) ? top : top + sep);
  });
  if (!inside) refuse(field, `${path} is outside this host's roots (${roots.join(', ')})`);
}

/**
 * The settings a job's fork runs with on this host: every field of the job checked by its rule
 * in `job-rules.ts` (none escapes the list), the host's endpoint and key, the job's tools,
 * sandbox, limits and permissions checked against (or narrowed, clamped to) the host's ceiling.
 * `jobId`: the id the job's signature covers, which its identity fields must agree with.
 * @throws ForkcacheError `JOB_POLICY_REFUSED` naming the field that asks for more than the host allows.
 */
export function applyHostPolicy(
  job: ForkJobData,
  options: HostPolicyOptions,
  facts: HostFacts = {},
  jobId?: string,
): HostSettings {
  checkIdentity(job, jobId);
  const { data, clamped } = applyJobRules(job, options.ceilings);
  const provider = data.api.provider ?? 'anthropic';
  const endpoint = hostEndpoint(provider, options);
  const asked = endpointOf(data.api.baseURL);
  if (asked === undefined || asked !== endpointOf(endpoint.baseURL))
    refuse(
      'api.baseURL',
      `the job asks for ${JSON.stringify(data.api.baseURL)}; this host sends ${provider} requests (and its key) only to ${endpoint.baseURL} (${endpoint.source})`,
    );
  const ceiling = options.allow ?? FILE_TOOL_NAMES;
  const beyond = data.tools.allow.filter((tool) => !(ceiling as readonly string[]).includes(tool));
  if (beyond.length > 0)
    refuse('tools.allow', `${beyond.join(', ')} not allowed on this host (it allows ${ceiling.join(', ') || 'none'})`);
  const noBash = bashRefusal(options, facts);
  if (data.tools.allow.includes('bash') && noBash !== undefined) refuse('tools.allow', `bash: ${noBash}`);
  if (data.loop.check !== undefined && noBash !== undefined)
    refuse('loop.check.command', `the job's check \`${data.loop.check.command}\` is not run: ${noBash}`);
  const floor = options.sandbox ?? 'auto';
  const sandbox = data.tools.sandbox ?? 'auto';
  if (!(sandbox in SANDBOX_RANK) || SANDBOX_RANK[sandbox] < SANDBOX_RANK[floor])
    refuse('tools.sandbox', `the job asks for sandbox "${sandbox}", this host runs bash in "${floor}" at the least`);
  for (const name of HOST_FLAGS)
    if (data.tools[name] === true && options[name] !== true)
      refuse(`tools.${name}`, `the job turns ${name} on (${TOOL_FLAGS[name]}); this host does not allow it`);
  const registered = options.registeredTools ?? [];
  const missing = (data.tools.host ?? []).filter((name) => !registered.some((t) => t.name === name));
  if (missing.length > 0)
    refuse(
      'tools.host',
      `the job's forks call the host tools ${missing.join(', ')}, which this host does not run (start it with --host-tools MODULE that exports them; it has ${registered.map((t) => t.name).join(', ') || 'none'})`,
    );
  if (options.roots && options.roots.length > 0) {
    checkRoot('tools.workspace', data.tools.workspace, options.roots);
    if (data.transcriptPath) checkRoot('transcriptPath', data.transcriptPath, options.roots);
  }
  return {
    api: {
      provider,
      baseURL: endpoint.baseURL,
      apiKey: endpoint.apiKey,
      // a credential in a job's headers would go wherever its endpoint points: never taken
      headers: withoutCredentials(data.api.headers),
      maxRetries: data.api.maxRetries,
      timeoutMs: data.api.timeoutMs,
    },
    loop: data.loop,
    tools: {
      workspace: data.tools.workspace,
      allow: [...data.tools.allow] as ExecutableToolName[],
      limits: data.tools.limits,
      sandbox,
      // every flag the rules let through, on only where the job says `true`
      flags: toolFlagsOf(data.tools),
      secrets: [],
      ...(data.tools.host?.length
        ? { host: registered.filter((t) => data.tools.host!.includes(t.name)).map((t) => ({ ...t })) }
        : {}),
    },
    permissions: narrowPermissions(data.permissions, options.permissions ?? {}),
    clamped,
  };
}

/** The ceiling in words, for the host's start line. */
export function describePolicy(options: HostPolicyOptions): string {
  return [
    `tools ${(options.allow ?? FILE_TOOL_NAMES).join(',')}`,
    `bash sandbox at least ${options.sandbox ?? 'auto'}`,
    ...HOST_FLAGS.map((name) => `${name} ${options[name] ? 'allowed' : 'refused'}`),
    options.permissions ? 'permissions combined with its own' : undefined,
    options.registeredTools?.length ? `host tools ${options.registeredTools.map((t) => t.name).join(',')}` : undefined,
    options.roots?.length ? `files under ${options.roots.join(', ')}` : 'files anywhere',
    `limits above its ceilings clamped (${describeCeilings(options.ceilings)})`,
    `endpoint and key: ${options.baseURL ? options.baseURL : "this host's environment"}`,
  ]
    .filter((part) => part !== undefined)
    .join('; ');
}

/** The ceilings set on this host (the others: the defaults of `job-rules.ts`), in words. */
function describeCeilings(ceilings: Readonly<Record<string, number>> | undefined): string {
  const set = Object.entries(ceilings ?? {});
  const defaults = 'the defaults elsewhere, `forkcache worker --help`';
  return set.length === 0 ? 'the defaults' : `${set.map(([path, n]) => `${path} ${n}`).join(', ')}; ${defaults}`;
}
