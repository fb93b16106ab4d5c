import { describe, expect, it } from 'vitest';
import { engineOptionsOf, manifestEngine } from '../../../src/core/engine/manifest-engine.ts';
import { resolveEngineOptions } from '../../../src/core/engine/options.ts';
import { manifestSchema } from '../../../src/core/run-dir/manifest.ts';
import { TOOL_FLAG_NAMES, type ToolFlags, toolFlagsOf } from '../../../src/core/tools/tool-flags.ts';

const local = { baseURL: 'http://127.0.0.1:1', apiKey: 'k' };

describe("a run's engine settings", () => {
  it('read back from the manifest are the ones written: resume runs as the first run did', () => {
    const first = resolveEngineOptions({
      ...local,
      headers: { 'x-forkcache-script': 'refactor', 'x-api-key': 'secret' },
      workspace: '/tmp/ws',
      runsDir: '/tmp/runs',
      maxTurns: 7,
      maxTokens: 900,
      allow: ['read_file', 'bash'],
      warm: 'prewarm',
      permissions: { default: 'ask', tools: { bash: 'deny' } },
      isolation: 'worktree',
      sparseWorktrees: true,
      toolLimits: { maxReadBytes: 1000 },
      sandbox: 'none',
      network: true,
      turnRetry: { retries: 1, baseMs: 10, maxMs: 20, budgetMs: 1000 },
      concurrency: 3,
      toolSet: 'qwen-code',
      denyTools: ['web_fetch'],
    });
    const written = manifestEngine(first);
    // through JSON and the manifest's own schema, as resume reads it
    const read = manifestSchema.shape.engine.parse(JSON.parse(JSON.stringify(written)));
    const resumed = resolveEngineOptions({ ...local, ...engineOptionsOf(read), runsDir: '/tmp/runs' });
    expect(manifestEngine(resumed)).toEqual(written);
    expect(written.headers).not.toHaveProperty('x-api-key');
  });

  it('keep the Responses wire and the TTL its head was frozen with (the resolved one, not auto)', () => {
    const first = resolveEngineOptions({ ...local, provider: 'openai', openaiWire: 'responses' });
    expect(first.responsesTtl).toBe('auto');
    const written = manifestEngine(first, { ttl: '12h' });
    expect(written).toMatchObject({ openaiWire: 'responses', responsesTtl: '12h' });
    const read = manifestSchema.shape.engine.parse(JSON.parse(JSON.stringify(written)));
    const resumed = resolveEngineOptions({ ...local, provider: 'openai', ...engineOptionsOf(read) });
    expect(resumed.api.wire).toBe('responses');
    expect(resumed.responsesTtl).toBe('12h');
    expect(manifestEngine(resumed)).toEqual(written);
    // Chat Completions (and every run older than the field): nothing written, nothing read back
    const chat = manifestEngine(resolveEngineOptions({ ...local, provider: 'openai' }), undefined);
    expect(chat).not.toHaveProperty('openaiWire');
    expect(engineOptionsOf(manifestSchema.shape.engine.parse(chat))).not.toHaveProperty('openaiWire');
  });

  it('keep every tool flag through the manifest, each alone on; a run older than a flag resumes with it off', () => {
    const cases: Partial<ToolFlags>[] = [{}, ...TOOL_FLAG_NAMES.map((name) => ({ [name]: true }))];
    for (const flags of cases) {
      const written = manifestEngine(resolveEngineOptions({ ...local, ...flags }));
      const read = manifestSchema.shape.engine.parse(JSON.parse(JSON.stringify(written)));
      const resumed = resolveEngineOptions({ ...local, ...engineOptionsOf(read) });
      expect(toolFlagsOf(resumed)).toEqual(toolFlagsOf(flags));
    }
    // a manifest written before any flag existed
    const older = manifestEngine(resolveEngineOptions(local)) as Record<string, unknown>;
    for (const name of TOOL_FLAG_NAMES) delete older[name];
    const read = manifestSchema.shape.engine.parse(older);
    expect(toolFlagsOf(resolveEngineOptions({ ...local, ...engineOptionsOf(read) }))).toEqual(toolFlagsOf({}));
  });
});
