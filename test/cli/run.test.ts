import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson } from './run-cli.ts';

function planFile(plan: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-plan-'));
  const path = join(dir, 'plan.json');
  writeFileSync(path, typeof plan === 'string' ? plan : JSON.stringify(plan));
  return path;
}

describe('forkcache run PLAN.json', () => {
  it('runs the example plan on the embedded emulator when no key is set, and says so', async () => {
    const { code, stdout, stderr } = await forkcache(['run', 'examples/plan/plan.json', '--json']);
    expect(stderr).toMatch(/against the embedded emulator/);
    expect(code).toBe(0);
    const summary = lastJson(stdout);
    expect(summary.api).toBe('emulator');
    expect(summary.forks).toEqual({ total: 3, completed: 3, failed: 0, cancelled: 0 });
    expect(summary.cache.cache_efficiency).toBe(1);
    for (const key of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens']) expect(typeof summary.usage[key]).toBe('number');
    expect(summary.prefix.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof summary.run_dir).toBe('string');
  });

  it('exits 2 on a plan that names a bad field, or bad JSON', async () => {
    const bad = await forkcache(['run', planFile({ parent: { model: 'claude-sonnet-4-6', messages: [] }, directives: [''] })]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/directives\[0\]: a directive must not be empty/);
    const missing = await forkcache(['run', planFile({ parent: 'nope.json', directives: ['x'] })]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/plan\.parent: cannot read .*nope\.json \(ENOENT\)/);
    const notJson = await forkcache(['run', planFile('{ nope')]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/is not valid JSON/);
    const unknownKey = await forkcache(['run', planFile({ parent: {}, directives: ['x'], dirctives: [] })]);
    expect(unknownKey.code).toBe(2);
    expect(unknownKey.stderr).toMatch(/dirctives/);
  });

  it('--api anthropic without a key is bad input', async () => {
    const { code, stderr } = await forkcache(['run', 'examples/plan/plan.json', '--api', 'anthropic']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--api anthropic: ANTHROPIC_API_KEY is not set/);
  });
});
