import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { hasCode } from '../../../src/core/util/errors.ts';

const KEY_AND_BASE_ENV = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'DASHSCOPE_API_KEY',
  'DASHSCOPE_BASE_URL',
];

function dirs(): { workspace: string; runDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'fc-endpoint-'));
  return { workspace: root, runDir: join(root, 'runs') };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('ForkEngine.create needs an endpoint it can reach', () => {
  it('refuses no key and no base URL, naming the field and both ways out', async () => {
    for (const name of KEY_AND_BASE_ENV) vi.stubEnv(name, '');
    const err: unknown = await ForkEngine.create(dirs()).catch((e: unknown) => e);
    expect(hasCode(err, 'INVALID_OPTION')).toBe(true);
    expect((err as Error).message).toMatch(/apiKey: no API key and no baseURL for provider 'anthropic'/);
    expect((err as Error).message).toMatch(/ANTHROPIC_API_KEY/);
    expect((err as Error).message).toMatch(/startEmulator/);
    const chat: unknown = await ForkEngine.create({ ...dirs(), provider: 'openai' }).catch((e: unknown) => e);
    expect((chat as Error).message).toMatch(/provider 'openai'.*OPENAI_API_KEY.*OPENAI_BASE_URL/);
  });

  it('takes a base URL without a key, a key without a base URL, or either from the environment', async () => {
    for (const name of KEY_AND_BASE_ENV) vi.stubEnv(name, '');
    const made: ForkEngine[] = [];
    try {
      made.push(await ForkEngine.create({ ...dirs(), baseURL: 'http://127.0.0.1:9/' }));
      made.push(await ForkEngine.create({ ...dirs(), apiKey: 'sk-test' }));
      vi.stubEnv('ANTHROPIC_API_KEY', 'sk-from-env');
      made.push(await ForkEngine.create(dirs()));
      vi.stubEnv('ANTHROPIC_API_KEY', '');
      vi.stubEnv('DASHSCOPE_BASE_URL', 'http://127.0.0.1:9/v1');
      made.push(await ForkEngine.create({ ...dirs(), provider: 'dashscope' }));
      expect(made).toHaveLength(4);
    } finally {
      await Promise.all(made.map((engine) => engine.close()));
    }
  });
});
