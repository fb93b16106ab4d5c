import { describe, expect, it } from 'vitest';
import { forkcache, lastJson, allCompleted } from './run-cli.ts';

// The done-when of the providers issue: the demo on the emulator in each provider's own mode.
describe('forkcache demo --provider', () => {
  it.each([
    ['dashscope', 'qwen layout'],
    ['openai', 'claude layout'],
  ])(
    '%s: every fork renames its file, on one frozen head, cache efficiency ≥ 0.99 (%s)',
    async (provider, layout) => {
      const { code, stdout, stderr } = await forkcache(
        ['demo', '--provider', provider, '--forks', '3', '--latency', 'off', '--json'],
        { OPENAI_API_KEY: undefined, DASHSCOPE_API_KEY: undefined },
      );
      expect(stderr).toContain(`${provider} mode, ${layout}`);
      expect(code).toBe(0);
      const summary = lastJson(stdout);
      expect(summary.forks).toEqual(allCompleted(3));
      expect(summary.leftovers).toEqual([]);
      expect(summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
      expect(summary.prefix.drift_events).toBe(0);
      expect(summary.cost_usd.actual).toBeLessThan(summary.cost_usd.no_cache);
    },
    60_000,
  );

  it('refuses an unknown provider with exit code 2, naming the flag', async () => {
    const { code, stderr } = await forkcache(['demo', '--provider', 'bedrock']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--provider: expected one of anthropic, openai, dashscope, deepseek, openai-compatible/);
  });
});
