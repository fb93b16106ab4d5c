import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe("package.json's sideEffects", () => {
  it('names every entry that runs code as it loads, so a bundler keeps the call that hands core the providers', () => {
    const { sideEffects } = JSON.parse(read('package.json')) as { sideEffects: unknown };
    expect(Array.isArray(sideEffects)).toBe(true);
    // the package's entries, and the fork worker Piscina loads by its path
    for (const entry of ['src/index', 'src/testing', 'src/ai-sdk', 'workers/fork-worker']) {
      const registers = /^useProviders\(/m.test(read(`${entry}.ts`));
      expect((sideEffects as string[]).includes(`./dist/${entry}.js`), entry).toBe(registers);
    }
  });
});
