import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureSnapshot } from '../../src/core/fork/snapshot.ts';
import { freeze } from '../../src/core/prefix/freeze.ts';
import { resolveEngineOptions } from '../../src/core/engine/options.ts';
import { useProviders } from '../../src/core/engine/providers-registered.ts';
import { providerIdSchema, providerIds, type ProviderId } from '../../src/core/wire/providers.ts';
import { planSchema } from '../../src/cli/plan/plan.ts';
import { demoWire, emulatorApiOf } from '../../src/cli/demo/provider-wire.ts';
import { chatAdapter } from '../../src/providers/openai/adapter.ts';
import { PROVIDERS } from '../../src/providers/registry.ts';
import { fixture, restoreEnv } from '../helpers.ts';

/*
 * Issue 46: a new provider is its folder and its registry line; core and the CLI take its id
 * from the registry. This registers one at run time (a test cannot add a registry line) and
 * asks each place that once listed the ids. The fork worker reads the registry file itself, so
 * a fan-out on such a provider is CONTRIBUTING's worked example, not this test.
 */
const ID = 'example-chat' as ProviderId;
const example = chatAdapter(ID, {
  readability: 'response-end',
  cacheStepTokens: 64,
  local: false,
  endpoint: {
    title: 'Example',
    keyEnv: ['EXAMPLE_API_KEY'],
    baseUrlEnv: ['EXAMPLE_BASE_URL'],
    defaultBaseURL: 'https://api.example.invalid/v1',
  },
  chat: { markers: false, maxTokensField: 'max_completion_tokens', cacheKey: false, headers: { 'X-Example': '1' } },
});

beforeAll(() => {
  // a schema that read an id before the registry changed reads against the new one after
  expect(providerIdSchema.parse('anthropic')).toBe('anthropic');
  useProviders({ ...PROVIDERS, [ID]: example });
});
// the unit project shares a worker between files: hand back the package's registry
afterAll(() => useProviders(PROVIDERS));

describe('a provider registered beside the built-in ones', () => {
  it('is an id of the schemas that read one (options, plans), and an unregistered id is refused with the list', () => {
    expect(providerIds()).toContain(ID);
    expect(providerIdSchema.parse(ID)).toBe(ID);
    expect(planSchema.parse({ parent: 'parent.json', directives: ['x'], provider: ID }).provider).toBe(ID);
    const refused = providerIdSchema.safeParse('nobody');
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toContain(`${ID}`);
  });

  it('freezes a head in its own Chat dialect', () => {
    const prefix = freeze(captureSnapshot(fixture<Record<string, unknown>>('parent-request.json')), { provider: ID });
    const head = new TextDecoder().decode(prefix.head);
    expect(prefix.provider).toBe(ID);
    // Chat Completions: the system prompt is a message, tools are functions; this dialect strips markers
    expect(head).toContain('"messages":[{"role":"system"');
    expect(head).toContain('"type":"function"');
    expect(head).not.toContain('cache_control');
  });

  it('resolves its endpoint from its own variables, and refuses the Responses API it does not speak', () => {
    const saved = { ...process.env };
    try {
      process.env['EXAMPLE_API_KEY'] = 'k-example';
      delete process.env['EXAMPLE_BASE_URL'];
      const resolved = resolveEngineOptions({ provider: ID });
      expect(resolved.api).toMatchObject({
        provider: ID,
        apiKey: 'k-example',
        baseURL: 'https://api.example.invalid/v1',
      });
      delete process.env['EXAMPLE_API_KEY'];
      // neither key nor endpoint: refused, naming this provider's variables
      expect(() => resolveEngineOptions({ provider: ID })).toThrow(/EXAMPLE_API_KEY.*EXAMPLE_BASE_URL/);
      expect(() => resolveEngineOptions({ provider: ID, apiKey: 'k', openaiWire: 'responses' })).toThrow(
        /provider 'example-chat' speaks Chat Completions/,
      );
    } finally {
      restoreEnv(saved);
    }
  });

  it("gets the demo's emulator mode and layout from its facts", () => {
    expect(emulatorApiOf(ID)).toBe('openai');
    expect(emulatorApiOf('dashscope')).toBe('dashscope');
    expect(emulatorApiOf('openai-compatible')).toBe('openai');
    expect(emulatorApiOf('anthropic')).toBe('anthropic');
    const wire = demoWire(ID, 'http://127.0.0.1:9', {});
    expect(wire).toMatchObject({ baseURL: 'http://127.0.0.1:9/v1', layout: 'claude' });
    expect(wire.send).toBeTypeOf('function');
    expect(demoWire('dashscope', 'http://127.0.0.1:9', {}).layout).toBe('qwen');
  });
});
