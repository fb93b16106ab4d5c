import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { manifestCoreSchema, manifestSchema } from '../../../src/core/run-dir/manifest.ts';
import { FIXTURE_RUN } from '../../integrations/report/helpers.ts';

const fixture = JSON.parse(readFileSync(join(FIXTURE_RUN, 'manifest.json'), 'utf8')) as Record<string, unknown>;

describe('one manifest schema, read whole by resume and in its core by the report', () => {
  it('the report reads an older manifest that resume cannot continue (it lacks the engine settings)', () => {
    expect(manifestCoreSchema.safeParse(fixture).success).toBe(true);
    expect(manifestSchema.safeParse(fixture).success).toBe(false);
  });

  it('both check the shared fields the same way', () => {
    const badHash = { ...fixture, prefix: { ...(fixture['prefix'] as object), sha256: 'abc' } };
    expect(manifestCoreSchema.safeParse(badHash).success).toBe(false);
    const noDirectives = { ...fixture, directives: [] };
    expect(manifestCoreSchema.safeParse(noDirectives).success).toBe(false);
  });
});
