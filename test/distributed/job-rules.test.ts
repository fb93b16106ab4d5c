import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyHostPolicy } from '../../src/distributed/host-policy.ts';
import { forkJobData } from '../../src/distributed/job-data.ts';
import { applyJobRules, JOB_RULES, jobRuleList, parseCeiling } from '../../src/distributed/job-rules.ts';
import type { ForkJobData } from '../../src/distributed/keys.ts';
import { DEFAULT_TURN_RETRY } from '../../src/loop/retry.ts';
import type { DispatchContext } from '../../src/pool/fork-dispatch.ts';
import { DEFAULT_TOOL_LIMITS } from '../../src/tools/limits.ts';
import { restoreEnv } from '../helpers.ts';

/**
 * A job as the submitter builds it (`forkJobData`), every optional part present: a check, a
 * retry prompt, admission, network, every tool limit set.
 */
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
        },
        admission: 'on',
        maxTurns: 20,
        maxTokens: 1000,
        turnRetry: DEFAULT_TURN_RETRY,
        allow: ['read_file', 'bash'],
        toolLimits: { ...DEFAULT_TOOL_LIMITS },
        sandbox: 'auto',
        network: true,
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
    check: { command: 'true', retries: 1, timeoutMs: 1000 },
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
        applyHostPolicy(data, { allow: ['read_file', 'bash'], network: true });
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
      network: true,
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
    expect(applyHostPolicy(job, { allow: ['read_file', 'bash'], network: true }).clamped).toEqual([]);
    expect(() => parseCeiling('tools.limits.bashTmpMb=128')).not.toThrow();
    expect(() => parseCeiling('tools.limits.nothing=1')).toThrow(/--ceiling: expected PATH=N with PATH among/);
  });

  it("a check runs only where the host allows bash and can sandbox it; the job's identity must match its id", () => {
    const job = fullJob();
    const fileOnly = { ...job, tools: { ...job.tools, allow: ['read_file' as const] }, admission: undefined };
    expect(() => applyHostPolicy(fileOnly, { network: true })).toThrow(
      /^loop\.check\.command: the job's check `true` is not run: this host does not allow bash/,
    );
    const missing = { sandboxMissing: 'bubblewrap is not installed' };
    expect(() => applyHostPolicy(fileOnly, { allow: ['read_file', 'bash'], network: true }, missing)).toThrow(
      /^loop\.check\.command: .*bash is NOT sandboxed on this host \(bubblewrap is not installed\).*--sandbox none/,
    );
    expect(() => applyHostPolicy(job, { allow: ['read_file', 'bash'], network: true }, missing)).toThrow(
      /^tools\.allow: bash: bash is NOT sandboxed on this host/,
    );
    // without the check and bash, a host without a sandbox runs the job's file tools
    const noCommand = { ...fileOnly, loop: { ...fileOnly.loop, check: undefined } };
    expect(() => applyHostPolicy(noCommand, { allow: ['read_file', 'bash'], network: true }, missing)).not.toThrow();
    expect(() => applyHostPolicy(job, { allow: ['read_file', 'bash'], network: true }, {}, 'fo001-x-f02.1.1')).toThrow(
      /^forkId: "fo001-x-f01" is not the fork job fo001-x-f02\.1\.1 names/,
    );
    expect(() =>
      applyHostPolicy(
        { ...job, fanoutId: 'fo009-y' },
        { allow: ['read_file', 'bash'], network: true },
        {},
        'fo001-x-f01.1.1',
      ),
    ).toThrow(/^fanoutId: /);
  });
});
