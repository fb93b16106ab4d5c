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
    expect(stderr).toMatch(
      /--provider: expected one of anthropic, openai, dashscope, deepseek, openai-compatible, llama-cpp/,
    );
  });

  it('llama-cpp without a server says plainly it runs on the emulator, and warns of no unpriced model', async () => {
    const { code, stderr, stdout } = await forkcache(
      ['demo', '--provider', 'llama-cpp', '--forks', '2', '--latency', 'off', '--json'],
      { OPENAI_BASE_URL: undefined },
    );
    expect(stderr).toMatch(/no --base-url and no OPENAI_BASE_URL: the demo runs on the embedded emulator/);
    expect(stderr).not.toMatch(/not in forkcache's model catalogue/);
    expect(code).toBe(0);
    const summary = lastJson(stdout);
    expect(summary.warnings).toEqual([]);
    expect(summary.engine.slots).toMatchObject({ total: 0, fill: 'none' });
    expect(summary.engine.slots.note).toMatch(/no llama-server \/props/);
  });

  it('--base-url is refused on a hosted provider, exit 2, naming the flag', async () => {
    const { code, stderr } = await forkcache(['demo', '--provider', 'openai', '--base-url', 'http://127.0.0.1:1/v1']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--base-url: only with --provider llama-cpp or openai-compatible/);
  });
});
