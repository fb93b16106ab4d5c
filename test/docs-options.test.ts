import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineOptionsSchema } from '../src/core/engine/options.ts';

// docs/library.md's "An engine" lists the engine's options; it had fallen nine behind the
// schema (issue 37). Every key `ForkEngine.create` accepts is named there, backticked.
const ROOT = resolve(import.meta.dirname, '..');

describe('the documented engine options', () => {
  it('name every option of the schema', () => {
    const page = readFileSync(resolve(ROOT, 'docs/library.md'), 'utf8');
    const section = page.slice(page.indexOf('## An engine'), page.indexOf('## A fan-out'));
    const keys = Object.keys(engineOptionsSchema.shape);
    expect(keys).toContain('maxUsd');
    expect(keys.filter((k) => !section.includes(`\`${k}\``) && !section.includes(`\`${k}:`))).toEqual([]);
  });
});
