import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ENGINE_SETTINGS,
  resolveSettings,
  SETTING_NAMES,
  type SettingDecl,
} from '../../../src/core/settings/engine-settings.ts';
import { applyHostPolicy } from '../../../src/integrations/distributed/host/policy.ts';
import { forkJobData } from '../../../src/integrations/distributed/jobs/data.ts';
import {
  applyJobRules,
  JOB_RULES,
  jobRuleList,
  parseCeiling,
} from '../../../src/integrations/distributed/jobs/rules.ts';
import type { ForkJobData } from '../../../src/integrations/distributed/keys.ts';
import { DEFAULT_TURN_RETRY } from '../../../src/core/loop/retry.ts';
import type { DispatchContext } from '../../../src/core/pool/fork-dispatch.ts';
import { DEFAULT_TOOL_LIMITS } from '../../../src/core/tools/limits.ts';
import { resolveEngineOptions } from '../../../src/core/engine/options.ts';
import { JobSigner } from '../../../src/integrations/distributed/jobs/signing.ts';
import { TOOL_FLAG_NAMES, type ToolFlags, toolFlagsOf } from '../../../src/core/tools/tool-flags.ts';
import { restoreEnv } from '../../helpers.ts';

/**
 * A job as the submitter builds it (`forkJobData`), every optional part present: a check, a
 * retry prompt, admission, every tool flag on, every tool limit set.
 */
/** Every tool flag on: in the engine's settings, every flag the job can carry; in a host's policy, every flag allowed. */
const EVERY_FLAG = toolFlagsOf(Object.fromEntries(TOOL_FLAG_NAMES.map((name) => [name, true])));

function fullJob(hostTools = false): ForkJobData {
  const ctx = {
    deps: {
      options: {
        api: {
          provider: 'anthropic',
          baseURL: 'http://127.0.0.1:4000',
          apiKey: 'k',
          headers: {},
          maxRetries: 2,
          timeoutMs: 1000,
          wire: 'responses',
        },
        admission: 'on',
        // every declared setting that travels to the worker, set (one unset by default: 1)
        ...Object.fromEntries(
          SETTING_NAMES.filter((name) => (ENGINE_SETTINGS[name] as SettingDecl).worker).map((name) => [
            name,
            resolveSettings({})[name] ?? 1,
          ]),
        ),
        maxTurns: 20,
        maxTokens: 1000,
        turnRetry: DEFAULT_TURN_RETRY,
        allow: ['read_file', 'bash'],
        toolLimits: { ...DEFAULT_TOOL_LIMITS },
        sandbox: 'auto',
        ...EVERY_FLAG,
        secrets: [],
        runDir: undefined,
        permissions: { default: 'allow' },
        testHooks: {},
      },
    },
    prefix: { sha256: 'a'.repeat(64), childMarker: '5m', provider: 'anthropic' },
    shared: () => ({ modelClass: 'sonnet', tokensPerByte: 0.3, readsShared: true }),
    forkId: 'fo001-x-f01',
    index: 0,
    base: { tailBlocks: [], messages: [] },
    workspace: '/tmp',
    transcriptPath: '/tmp/runs/fo001-x/forks/f01.jsonl',
    check: { command: 'true', retries: 1, timeoutMs: 1000, trackOutputs: true },
    judgeChange: true,
    ...(hostTools ? { host: { tools: [{ name: 'search_tickets', readOnly: true }] } } : {}),
    prompt: { reason: 'retry', text: 'again' },
  } as unknown as DispatchContext;
  return forkJobData(ctx);
}

/** The field paths of a job, down to the rule list's leaves. */
function paths(value: Record<string, unknown>, tree: object = JOB_RULES, prefix = ''): string[] {
  return Object.keys(value).flatMap((key) => {
    const node = (tree as Record<string, object | undefined>)[key];
    const path = `${prefix}${key}`;
    if (node === undefined || 'rule' in node) return [path];
    return paths(value[key] as Record<string, unknown>, node, `${path}.`);
  });
}

const saved = { ...process.env };
beforeEach(() => {
  process.env['ANTHROPIC_BASE_URL'] = 'http://127.0.0.1:4000';
});
afterEach(() => {
  restoreEnv(saved);
});

describe("one list of a job's fields and their rules", () => {
  it('names every field a real job carries, and no field a job cannot carry', () => {
    const job = fullJob(true);
    expect(paths(job as unknown as Record<string, unknown>).sort()).toEqual(
      jobRuleList()
        .map(([path]) => path)
        .sort(),
    );
    expect(() => applyJobRules(job)).not.toThrow();
  });

  it('a field without a rule is refused, at any depth: a new job field cannot reach a fork unchecked', () => {
    const job = fullJob();
    const added: [ForkJobData, RegExp][] = [
      [{ ...job, hostTools: ['probe'] } as ForkJobData, /^hostTools: this host has no policy rule/],
      [{ ...job, tools: { ...job.tools, env: { LD_PRELOAD: 'x' } } } as ForkJobData, /^tools\.env: /],
      [
        { ...job, loop: { ...job.loop, check: { ...job.loop.check!, shell: '/bin/sh' } } } as ForkJobData,
        /^loop\.check\.shell: /,
      ],
      [
        { ...job, tools: { ...job.tools, limits: { ...job.tools.limits, bashNice: 0 } } } as ForkJobData,
        /^tools\.limits\.bashNice: /,
      ],
    ];
    for (const [data, why] of added) {
      let error: { code?: string; message?: string } = {};
      try {
        applyHostPolicy(data, { allow: ['read_file', 'bash'], ...EVERY_FLAG });
      } catch (err) {
        error = err as typeof error;
      }
      expect(error.code).toBe('JOB_POLICY_REFUSED');
      expect(error.message).toMatch(why);
    }
  });

  it("limits above the host's ceilings are clamped and said; absent ones get the ceiling when it is below the default", () => {
    const job = fullJob();
    const asked = {
      ...job,
      api: { ...job.api, timeoutMs: 86_400_000 },
      loop: { ...job.loop, maxTurns: 100_000, check: { ...job.loop.check!, timeoutMs: 3_600_000 } },
      tools: { ...job.tools, limits: { bashTmpMb: 60_000, bashMaxMemoryMb: 1_000_000, bashTimeoutMs: 3_600_000 } },
    };
    const settings = applyHostPolicy(asked, {
      allow: ['read_file', 'bash'],
      ...EVERY_FLAG,
      ceilings: { 'tools.limits.bashTmpMb': 256, 'tools.limits.maxReadBytes': 1024 },
    });
    expect(settings.tools.limits).toEqual({
      bashTmpMb: 256,
      bashMaxMemoryMb: 8192,
      bashTimeoutMs: 600_000,
      maxReadBytes: 1024, // absent: its default (256 KiB) is above this host's ceiling
    });
    expect(settings.api.timeoutMs).toBe(1_800_000);
    expect(settings.loop.maxTurns).toBe(500);
    expect(settings.loop.check!.timeoutMs).toBe(1_800_000);
    expect(settings.clamped).toEqual([
      'api.timeoutMs: 86400000 → 1800000',
      'loop.maxTurns: 100000 → 500',
      'loop.check.timeoutMs: 3600000 → 1800000',
      'tools.limits.maxReadBytes: 262144 → 1024',
      'tools.limits.bashTimeoutMs: 3600000 → 600000',
      'tools.limits.bashMaxMemoryMb: 1000000 → 8192',
      'tools.limits.bashTmpMb: 60000 → 256',
    ]);
    // within the ceilings: unchanged, nothing said
    expect(applyHostPolicy(job, { allow: ['read_file', 'bash'], ...EVERY_FLAG }).clamped).toEqual([]);
    expect(() => parseCeiling('tools.limits.bashTmpMb=128')).not.toThrow();
    expect(() => parseCeiling('tools.limits.nothing=1')).toThrow(/--ceiling: expected PATH=N with PATH among/);
  });

  it("a check runs only where the host allows bash and can sandbox it; the job's identity must match its id", () => {
    const job = fullJob();
    const fileOnly = { ...job, tools: { ...job.tools, allow: ['read_file' as const] }, admission: undefined };
    expect(() => applyHostPolicy(fileOnly, EVERY_FLAG)).toThrow(
      /^loop\.check\.command: the job's check `true` is not run: this host does not allow bash/,
    );
    const missing = { sandboxMissing: 'bubblewrap is not installed' };
    expect(() => applyHostPolicy(fileOnly, { allow: ['read_file', 'bash'], ...EVERY_FLAG }, missing)).toThrow(
      /^loop\.check\.command: .*bash is NOT sandboxed on this host \(bubblewrap is not installed\).*--sandbox none/,
    );
    expect(() => applyHostPolicy(job, { allow: ['read_file', 'bash'], ...EVERY_FLAG }, missing)).toThrow(
      /^tools\.allow: bash: bash is NOT sandboxed on this host/,
    );
    // without the check and bash, a host without a sandbox runs the job's file tools
    const noCommand = { ...fileOnly, loop: { ...fileOnly.loop, check: undefined } };
    expect(() => applyHostPolicy(noCommand, { allow: ['read_file', 'bash'], ...EVERY_FLAG }, missing)).not.toThrow();
    expect(() => applyHostPolicy(job, { allow: ['read_file', 'bash'], ...EVERY_FLAG }, {}, 'fo001-x-f02.1.1')).toThrow(
      /^forkId: "fo001-x-f01" is not the fork job fo001-x-f02\.1\.1 names/,
    );
    expect(() =>
      applyHostPolicy(
        { ...job, fanoutId: 'fo009-y' },
        { allow: ['read_file', 'bash'], ...EVERY_FLAG },
        {},
        'fo001-x-f01.1.1',
      ),
    ).toThrow(/^fanoutId: /);
  });
});

/** A job of an engine resolved with these options, as the submitter builds it. */
function jobOf(flags: Partial<ToolFlags>): ForkJobData {
  const options = resolveEngineOptions({
    baseURL: 'http://127.0.0.1:4000',
    apiKey: 'k',
    allow: ['read_file'],
    ...flags,
  });
  const ctx = {
    deps: { options },
    prefix: { sha256: 'a'.repeat(64), childMarker: '5m' },
    forkId: 'fo001-x-f01',
    index: 0,
    base: { tailBlocks: [], messages: [] },
    workspace: '/tmp',
    transcriptPath: undefined,
  } as unknown as DispatchContext;
  return forkJobData(ctx);
}

describe('the tool flags in a distributed job', () => {
  // every flag of the list, alone on, and none: a flag added to tools/tool-flags.ts is checked here too
  const cases: Partial<ToolFlags>[] = [{}, ...TOOL_FLAG_NAMES.map((name) => ({ [name]: true }))];
  const signer = new JobSigner('a-secret-of-at-least-thirty-two-characters', 'q');
  const hostFlags = TOOL_FLAG_NAMES.filter((name) =>
    jobRuleList().some(([path, rule]) => path === `tools.${name}` && rule.rule === 'host-flag'),
  );

  it('each has its rule in the list; the job carries only those turned on, as older submitters sent them', () => {
    for (const name of TOOL_FLAG_NAMES) expect(jobRuleList().map(([path]) => path)).toContain(`tools.${name}`);
    expect(hostFlags).toContain('network');
    for (const flags of cases) {
      const tools = jobOf(flags).tools as Record<string, unknown>;
      for (const name of TOOL_FLAG_NAMES) expect(tools[name]).toBe(flags[name] === true ? true : undefined);
    }
  });

  it('signed, opened and ruled by a host that allows them, the fork runs with exactly the flags the job turned on', () => {
    for (const flags of cases) {
      const jobId = 'fo001-x-f01.1.1';
      const opened = signer.open<ForkJobData>(
        'job',
        jobId,
        JSON.parse(JSON.stringify(signer.seal('job', jobId, jobOf(flags)))),
      );
      expect(applyHostPolicy(opened, EVERY_FLAG, {}, jobId).tools.flags).toEqual(toolFlagsOf(flags));
      // a host that allows none of them runs the job with none
      if (Object.keys(flags).length === 0)
        expect(applyHostPolicy(opened, {}, {}, jobId).tools.flags).toEqual(toolFlagsOf({}));
    }
  });

  it("a flag that widens what a fork can do is refused where the host's policy does not allow it, and cannot be slipped into a signed job", () => {
    for (const name of hostFlags) {
      const job = jobOf({ [name]: true });
      expect(() => applyHostPolicy(job, {})).toThrow(
        new RegExp(`^tools\\.${name}: the job turns ${name} on .*this host does not allow it`),
      );
      // the attacker writes to Redis: the flag turned on in a job signed without it
      const jobId = 'fo001-x-f01.1.1';
      const sealed = signer.seal('job', jobId, jobOf({}));
      const forged = { ...sealed, body: JSON.stringify({ ...jobOf({}), tools: { ...jobOf({}).tools, [name]: true } }) };
      expect(() => signer.open('job', jobId, forged)).toThrow(/its signature does not match its data/);
    }
    // a value that is not `true` turns nothing on
    const odd = {
      ...jobOf({}),
      tools: { ...jobOf({}).tools, ...Object.fromEntries(TOOL_FLAG_NAMES.map((n) => [n, 'yes'])) },
    };
    expect(applyHostPolicy(odd as ForkJobData, {}).tools.flags).toEqual(toolFlagsOf({}));
  });
});
