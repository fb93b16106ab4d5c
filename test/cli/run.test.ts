import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson, allCompleted, examplePlan } from './run-cli.ts';

function planFile(plan: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-plan-'));
  const path = join(dir, 'plan.json');
  writeFileSync(path, typeof plan === 'string' ? plan : JSON.stringify(plan));
  return path;
}

describe('forkcache run PLAN.json', () => {
  it('runs the example plan on the embedded emulator when no key is set, and says so', async () => {
    const example = examplePlan();
    const { code, stdout, stderr } = await forkcache(['run', example.path, '--json']);
    expect(stderr).toMatch(/against the embedded emulator/);
    expect(code).toBe(0);
    const summary = lastJson(stdout);
    expect(summary.api).toBe('emulator');
    expect(summary.forks).toEqual(allCompleted(3));
    expect(summary.cache.cache_efficiency).toBe(1);
    for (const key of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'])
      expect(typeof summary.usage[key]).toBe('number');
    expect(summary.prefix.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(summary.run_dir.startsWith(join(example.dir, 'runs'))).toBe(true); // never into the checkout
  });

  it('exits 2 on a plan that names a bad field, or bad JSON', async () => {
    const bad = await forkcache([
      'run',
      planFile({ parent: { model: 'claude-sonnet-4-6', messages: [] }, directives: [''] }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/directives\[0\]: a directive must not be empty/);
    const missing = await forkcache(['run', planFile({ parent: 'nope.json', directives: ['x'] })]);
    expect(missing.code).toBe(2);
    // the one JSON reader's style (src/core/util/json-file.ts): what the file is, its path, why
    expect(missing.stderr).toMatch(/plan\.parent \S*nope\.json: cannot read \(no such file\)/);
    const notJson = await forkcache(['run', planFile('{ nope')]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/plan \S*\.json: not valid JSON \(/);
    const unknownKey = await forkcache(['run', planFile({ parent: {}, directives: ['x'], dirctives: [] })]);
    expect(unknownKey.code).toBe(2);
    expect(unknownKey.stderr).toMatch(/dirctives/);
  });

  it('--api anthropic without a key is bad input', async () => {
    const { code, stderr } = await forkcache(['run', examplePlan().path, '--api', 'anthropic']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--api anthropic: ANTHROPIC_API_KEY is not set/);
  });
});

describe('forkcache run: permissions from the plan', () => {
  it('ask means no without a terminal, and yes with --allow-asks', async () => {
    const { path } = examplePlan({
      directives: ['read src/lib/http.ts and report'],
      permissions: { tools: { read_file: 'ask' } },
    });
    const denied = lastJson((await forkcache(['run', path, '--json'])).stdout);
    expect(denied.fork_results[0].report.issues).toMatch(
      /Permission denied for read_file: not an interactive terminal; run with --allow-asks/,
    );
    const allowed = lastJson((await forkcache(['run', path, '--json', '--allow-asks'])).stdout);
    expect(allowed.fork_results[0].report.issues).toBe('none');
  });
});
