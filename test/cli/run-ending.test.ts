import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forkcache, lastJson, runNode } from './run-cli.ts';

// Issue 25: a price of 1e308 ended a run with "cost overflow: NaN nano-dollars" and then no
// exit (the embedded emulator and the pool stayed open). Each test waits for the child's
// `close` event, never a time: before the fix the third one never got it.
const dir = mkdtempSync(join(tmpdir(), 'fc-ending-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ROOT = process.cwd();

function write(name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

function plan(name: string, extra: Record<string, unknown> = {}): string {
  return write(name, {
    parent: join(ROOT, 'examples/plan/parent.json'),
    directives: ['read src/lib/http.ts and report', 'read src/features/users.ts and report'],
    workspace: join(ROOT, 'examples/sample-repo'),
    runDir: join(dir, `${name}-runs`),
    allow: ['read_file', 'list_dir', 'grep', 'glob'],
    emulator: { script: 'refactor', latency: 'off' },
    ...extra,
  });
}

const opusAt = (price: number) => ({
  date: '2026-11-30',
  models: [
    { id: 'claude-opus-5-5', prices: [{ effectiveFrom: '2026-10-07', inputPerMTok: price, outputPerMTok: 20 }] },
  ],
});

describe('a run whose prices are out of range', () => {
  it("refuses a 1e308 price in a plan's modelTable before anything runs: exit 2, row and field named, no run directory", async () => {
    const table = write('huge.json', opusAt(1e308));
    const path = plan('huge-plan', { modelTable: table });
    const out = await forkcache(['run', path, '--json']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(
      `model table ${table}: models[0] (claude-opus-5-5).prices[0].inputPerMTok: expected a price of at most 10000 USD per million tokens (got 1e+308)`,
    );
    expect(out.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(join(dir, 'huge-plan-runs'))).toBe(false);
  });

  it('demo --model-table BAD exits 2 with the error and no stack trace', async () => {
    const table = write('bad-date.json', { date: '2026-13-45', models: [] });
    const out = await forkcache(['demo', '--model-table', table, '--forks', '1', '--latency', 'off']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`model table ${table}: date: not a calendar date (got "2026-13-45")`);
    expect(out.stderr).not.toMatch(/^\s+at /m);
    const multiplier = write('multiplier.json', {
      date: '2026-11-30',
      models: [
        {
          id: 'claude-x',
          prices: [{ effectiveFrom: '2026-11-30', inputPerMTok: 1, outputPerMTok: 1, cacheReadMultiplier: 1e300 }],
        },
      ],
    });
    const second = await forkcache(['demo', '--model-table', multiplier, '--forks', '1', '--latency', 'off']);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      'models[0] (claude-x).prices[0].cacheReadMultiplier: expected a multiplier of at most 10',
    );
  });

  it('a cost that cannot be computed after the forks finished: the summary is printed, then exit 1', async () => {
    // the price reaches the ledger in memory (as a hand-built catalogue of a library user would)
    const out = await runNode(
      [
        '--import',
        'tsx',
        'test/fixtures/cli-price-out-of-range.ts',
        'claude-opus-5-5',
        '1e308',
        'run',
        plan('overflow-plan'),
        '--json',
        '--api',
        'emulator',
      ],
      { cwd: ROOT, env: { NO_COLOR: '1', ANTHROPIC_API_KEY: undefined } },
    );
    expect(out.code).toBe(1);
    const summary = lastJson(out.stdout);
    expect(summary.forks).toMatchObject({ total: 2, completed: 2 });
    expect(summary.cost_usd).toEqual({ actual: null, no_cache: null, fresh_agents: null });
    expect(summary.warnings).toEqual([
      expect.stringMatching(/^cost not computed: cost overflow: .* not a safe integer/),
    ]);
    expect(out.stderr).toMatch(/cost not computed: cost overflow/);
    expect(out.stderr).not.toMatch(/^\s+at /m);
  });
});
