import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROVIDER_IDS, PROVIDERS } from '../../src/providers/registry.ts';

const CORE = fileURLToPath(new URL('../../src/core/', import.meta.url));

/**
 * The core files that still name a provider, and how many times (issue 46: core asks the
 * provider's adapter, src/core/engine/provider.ts, and compares no ids). Each is a step left:
 * the list only shrinks. A file not listed here that names a provider fails the test.
 */
const STILL_NAMED: Readonly<Record<string, number>> = {
  // the provider of a fan-out, a plan or a manifest that names none (every run before providers existed)
  'wire/providers.ts': 1,
  // the built-in catalogue's rows say whose model they price; it is parsed as its module loads,
  // before an entry hands core the providers, so its ids cannot come from the registry
  'models/schema.ts': 5,
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** How often `source`'s code (its comments aside) names a provider id as a string literal ('deepseek', "openai"). */
function namings(source: string): number {
  // a package's name is no provider's ('openai' is the SDK in `from 'openai'`)
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
    .replace(/\b(from|import)\s*\(?\s*(['"])[^'"]*\2/g, '');
  const ids = PROVIDER_IDS.map((id) => id.replace(/[-]/g, '\\-')).join('|');
  return code.match(new RegExp(`(['"])(${ids})\\1`, 'g'))?.length ?? 0;
}

describe('core compares no provider ids', () => {
  it('names a provider only in the files still listed, no more often than listed', () => {
    const found = Object.fromEntries(
      sources(CORE)
        .map((file) => [relative(CORE, file), namings(readFileSync(file, 'utf8'))] as const)
        .filter(([, n]) => n > 0),
    );
    for (const [file, n] of Object.entries(found)) expect({ file, n }).toEqual({ file, n: STILL_NAMED[file] ?? 0 });
    // a listed file that no longer names one: take it off the list
    expect(Object.keys(found).sort()).toEqual(Object.keys(STILL_NAMED).sort());
  });

  it('counts the literals the way the list means them', () => {
    expect(namings(`if (provider === 'deepseek') return "openai";`)).toBe(2);
    expect(namings("const x = 'anthropic';\n// the 'openai' wire\n/** `dashscope` caches at markers */")).toBe(1);
    expect(namings("import OpenAI from 'openai';\nconst m = await import('openai');")).toBe(0);
  });

  it('has an adapter for every provider id, under its own id', () => {
    expect(Object.keys(PROVIDERS).sort()).toEqual([...PROVIDER_IDS].sort());
    for (const id of PROVIDER_IDS) expect(PROVIDERS[id].id).toBe(id);
  });
});
