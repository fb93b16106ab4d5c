import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyHostPolicy, narrowPermissions } from '../../../src/integrations/distributed/host/policy.ts';
import type { ForkJobData } from '../../../src/integrations/distributed/keys.ts';
import { JobSigner, resolveJobSecret } from '../../../src/integrations/distributed/jobs/signing.ts';
import { workspace } from '../../core/engine/helpers.ts';
import { restoreEnv } from '../../helpers.ts';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';

function job(change: { api?: Partial<ForkJobData['api']>; tools?: Partial<ForkJobData['tools']> } = {}): ForkJobData {
  return {
    v: 1,
    fanoutId: 'fo001-x',
    forkId: 'fo001-x-f01',
    index: 0,
    prefixSha256: 'a'.repeat(64),
    base: { tailBlocks: [], messages: [] },
    api: {
      provider: 'anthropic',
      baseURL: 'http://127.0.0.1:4000',
      headers: { 'anthropic-beta': 'x', 'x-api-key': 'from-the-job', Authorization: 'Bearer job' },
      maxRetries: 2,
      timeoutMs: 1000,
      ...change.api,
    },
    loop: { maxTurns: 4, maxTokens: 100, querySource: 'x', marker: '5m', retry: { retries: 0, baseMs: 0, maxMs: 0 } },
    tools: { workspace: '/tmp', allow: ['read_file'], limits: {}, sandbox: 'auto', ...change.tools },
    permissions: {},
    transcriptPath: undefined,
  };
}

const saved = { ...process.env };
afterEach(() => {
  restoreEnv(saved);
});

describe("a host's own policy over its jobs", () => {
  it('sends to its own endpoint with its own key, never a credential from the job; another endpoint is refused', () => {
    process.env['ANTHROPIC_BASE_URL'] = 'http://127.0.0.1:4000/';
    process.env['ANTHROPIC_API_KEY'] = 'host-key';
    const { api } = applyHostPolicy(job(), {});
    expect(api).toMatchObject({
      baseURL: 'http://127.0.0.1:4000/',
      apiKey: 'host-key',
      headers: { 'anthropic-beta': 'x' },
    });
    expect(Object.keys(api.headers)).toEqual(['anthropic-beta']);
    expect(() => applyHostPolicy(job({ api: { baseURL: 'http://127.0.0.1:4001' } }), {})).toThrow(
      /^api\.baseURL: the job asks for "http:\/\/127\.0\.0\.1:4001"; this host sends anthropic requests \(and its key\) only to http:\/\/127\.0\.0\.1:4000\/ \(ANTHROPIC_BASE_URL\)/,
    );
    expect(() => applyHostPolicy(job({ api: { baseURL: 'not a url' } }), {})).toThrow(/api\.baseURL/);
    // a Chat provider: its own variables
    process.env['DASHSCOPE_BASE_URL'] = 'http://127.0.0.1:5000/v1';
    process.env['DASHSCOPE_API_KEY'] = 'ds-host-key';
    const chat = applyHostPolicy(job({ api: { provider: 'dashscope', baseURL: 'http://127.0.0.1:5000/v1' } }), {});
    expect(chat.api).toMatchObject({ provider: 'dashscope', apiKey: 'ds-host-key' });
  });

  it('a job may narrow the tools, the sandbox and the permissions, never widen them', () => {
    process.env['ANTHROPIC_BASE_URL'] = 'http://127.0.0.1:4000';
    const refused = (data: ForkJobData, options: Parameters<typeof applyHostPolicy>[1], field: RegExp): void => {
      let error: { code?: string; data?: { field?: string }; message?: string } = {};
      try {
        applyHostPolicy(data, options);
      } catch (err) {
        error = err as typeof error;
      }
      expect(error.code).toBe('JOB_POLICY_REFUSED');
      expect(`${error.data?.field}: ${error.message}`).toMatch(field);
    };
    refused(job({ tools: { allow: ['read_file', 'bash'] } }), {}, /^tools\.allow: .*bash not allowed/);
    expect(
      applyHostPolicy(job({ tools: { allow: ['read_file', 'bash'] } }), { allow: ['read_file', 'bash'] }).tools.allow,
    ).toEqual(['read_file', 'bash']);
    refused(job({ tools: { sandbox: 'none' } }), {}, /^tools\.sandbox/);
    refused(job({ tools: { sandbox: 'auto' } }), { sandbox: 'bwrap' }, /^tools\.sandbox/);
    expect(applyHostPolicy(job({ tools: { sandbox: 'bwrap' } }), {}).tools.sandbox).toBe('bwrap');
    expect(applyHostPolicy(job({ tools: { sandbox: 'none' } }), { sandbox: 'none' }).tools.sandbox).toBe('none');
    refused(job({ tools: { network: true } }), {}, /^tools\.network/);
    expect(() => applyHostPolicy(job({ tools: { network: true } }), { network: true })).not.toThrow();
    expect(
      narrowPermissions({ default: 'allow', tools: { bash: 'allow', edit_file: 'deny' } }, { tools: { bash: 'ask' } }),
    ).toEqual({ default: 'allow', tools: { bash: 'ask', edit_file: 'deny' } });
    expect(narrowPermissions({}, { default: 'deny' })).toEqual({ default: 'deny', tools: {} });
  });

  it('roots: a workspace or transcript outside them, through a symlink too, is refused', () => {
    process.env['ANTHROPIC_BASE_URL'] = 'http://127.0.0.1:4000';
    const root = workspace({});
    const inside = join(root, 'ws');
    mkdirSync(inside);
    const outside = workspace({});
    symlinkSync(outside, join(root, 'link'));
    const withPaths = (ws: string, transcript?: string): ForkJobData => ({
      ...job({ tools: { workspace: ws } }),
      transcriptPath: transcript,
    });
    expect(() =>
      applyHostPolicy(withPaths(inside, join(root, 'runs/fo/forks/f01.jsonl')), { roots: [root] }),
    ).not.toThrow();
    expect(() => applyHostPolicy(withPaths(outside), { roots: [root] })).toThrow(/tools\.workspace: .* is outside/);
    expect(() => applyHostPolicy(withPaths(join(root, 'link')), { roots: [root] })).toThrow(/tools\.workspace/);
    expect(() => applyHostPolicy(withPaths(inside, join(outside, 'f.jsonl')), { roots: [root] })).toThrow(
      /transcriptPath/,
    );
  });
});

describe('job signatures', () => {
  it('bind the kind, the queue and the job id; another secret is told apart from tampering', () => {
    const signer = new JobSigner(SECRET, 'q');
    const sealed = signer.seal('job', 'fo1-f01.1.1', { a: 1 });
    expect(signer.open('job', 'fo1-f01.1.1', sealed)).toEqual({ a: 1 });
    expect(() => signer.open('result', 'fo1-f01.1.1', sealed)).toThrow(/does not match/);
    expect(() => signer.open('job', 'fo1-f02.1.1', sealed)).toThrow(/does not match/);
    expect(() => new JobSigner(SECRET, 'other-queue').open('job', 'fo1-f01.1.1', sealed)).toThrow(/does not match/);
    expect(() => signer.open('job', 'fo1-f01.1.1', { ...sealed, body: '{"a":2}' })).toThrow(/does not match/);
    expect(() => signer.open('job', 'fo1-f01.1.1', { a: 1 })).toThrow(/not signed/);
    expect(() => new JobSigner(`${SECRET}-2`, 'q').open('job', 'fo1-f01.1.1', sealed)).toThrow(
      /signed with key \w{16}, this process's FORKCACHE_JOB_SECRET is key \w{16}/,
    );
  });

  it('no secret, or a short one: the backend refuses to start, naming the variable', () => {
    delete process.env['FORKCACHE_JOB_SECRET'];
    expect(() => resolveJobSecret(undefined, 'distributed.secret')).toThrow(
      /distributed\.secret: .* set FORKCACHE_JOB_SECRET/,
    );
    process.env['FORKCACHE_JOB_SECRET'] = 'short';
    expect(() => resolveJobSecret(undefined, 'distributed.secret')).toThrow(/has 5 characters, at least 32/);
    process.env['FORKCACHE_JOB_SECRET'] = SECRET;
    expect(resolveJobSecret(undefined, 'x')).toBe(SECRET);
  });
});
