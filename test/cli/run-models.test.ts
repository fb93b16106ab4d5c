import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { BUILTIN_CATALOGUE, mergeCatalogue } from '../../src/core/models/catalogue.ts';
import { statusAt } from '../../src/core/models/status.ts';
import { forkcache, lastJson } from './run-cli.ts';

const ROOT = process.cwd();
const example = JSON.parse(readFileSync('examples/plan/plan.json', 'utf8')) as Record<string, unknown>;

/** The example plan on `model`, with absolute paths and its own run directory. */
function plan(model: string, extra: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-models-plan-'));
  const path = join(dir, 'plan.json');
  const body = {
    ...example,
    model,
    parent: join(ROOT, 'examples/plan/parent.json'),
    workspace: join(ROOT, 'examples/sample-repo'),
    runsDir: join(dir, 'runs'),
    directives: ['read src/lib/http.ts and report', 'read src/features/users.ts and report'],
    ...extra,
  };
  writeFileSync(path, JSON.stringify(body));
  return path;
}

const CURRENT = BUILTIN_CATALOGUE.models.filter((m) => statusAt(m, Date.now()) === 'current').map((m) => m.id);

describe("forkcache run on today's models", () => {
  it.each(CURRENT)('a plan on %s runs to completion on the emulator, priced', async (model) => {
    const run = await forkcache(['run', plan(model), '--json']);
    expect(run.stderr).not.toMatch(/warning:/);
    expect(run.code).toBe(0);
    const summary = lastJson(run.stdout);
    expect(summary.forks).toMatchObject({ total: 2, completed: 2 });
    expect(summary.cost_usd.actual).toBeGreaterThan(0);
    expect(summary.unpriced).toEqual({ requests: 0, models: [] });
  });

  it('refuses a retired model before any request, exit 2, naming the replacement', async () => {
    const run = await forkcache(['run', plan('claude-opus-4-1'), '--json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /model: "claude-opus-4-1" was retired: requests to it fail; use claude-opus-5-5 instead/,
    );
    expect(run.stdout).toBe('');
  });

  it('runs a model the endpoint knows and the catalogue does not: cost null, one warning, how to price it', async () => {
    // The stand-in API knows claude-opus-6; forkcache's own catalogue does not.
    const api = await startEmulator({
      script: 'refactor',
      modelTable: mergeCatalogue({
        date: '2026-12-01',
        models: [
          { id: 'claude-opus-6', prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 6, outputPerMTok: 30 }] },
        ],
      }),
    });
    try {
      const env = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: api.url };
      const run = await forkcache(['run', plan('claude-opus-6'), '--json', '--report', '--api', 'anthropic'], env);
      expect(run.code).toBe(0);
      expect(run.stderr.match(/warning: model: "claude-opus-6" is not in forkcache's model catalogue/g)).toHaveLength(
        1,
      );
      expect(run.stderr).toMatch(/--model-table FILE/);
      const summary = lastJson(run.stdout);
      expect(summary.forks).toMatchObject({ total: 2, completed: 2 });
      expect(summary.usage.cache_read_input_tokens).toBeGreaterThan(0);
      expect(summary.cost_usd).toEqual({ actual: null, no_cache: null, fresh_agents: null });
      expect(summary.savings).toEqual({ vs_no_cache: null, vs_fresh_agents: null });
      expect(summary.unpriced.models).toEqual(['claude-opus-6']);
      expect(run.stdout).not.toMatch(/NaN/);
      // The report reads the unpriced summary, says so, and names the catalogue date.
      const html = readFileSync(summary.report, 'utf8');
      expect(html).toMatch(/model catalogue of 2026-11-30; \d+ requests unpriced \(claude-opus-6\)/);
      expect(html).not.toMatch(/NaN/);

      // Priced with a user table (here the plan's modelTable field): the same run has a cost.
      const table = join(mkdtempSync(join(tmpdir(), 'fc-table-')), 'models.json');
      writeFileSync(
        table,
        JSON.stringify({
          date: '2026-12-01',
          models: [
            { id: 'claude-opus-6', prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 6, outputPerMTok: 30 }] },
          ],
        }),
      );
      const priced = await forkcache(
        ['run', plan('claude-opus-6', { modelTable: table }), '--json', '--api', 'anthropic'],
        env,
      );
      expect(priced.code).toBe(0);
      expect(priced.stderr).not.toMatch(/warning:/);
      expect(lastJson(priced.stdout).cost_usd.actual).toBeGreaterThan(0);
    } finally {
      await api.close();
    }
  });

  it('the text summary says when a run is unpriced, without NaN', async () => {
    const api = await startEmulator({
      script: 'refactor',
      modelTable: mergeCatalogue({
        date: '2026-12-01',
        models: [
          { id: 'claude-opus-6', prices: [{ effectiveFrom: '2026-12-01', inputPerMTok: 6, outputPerMTok: 30 }] },
        ],
      }),
    });
    try {
      const run = await forkcache(['run', plan('claude-opus-6'), '--api', 'anthropic'], {
        ANTHROPIC_API_KEY: 'sk-test',
        ANTHROPIC_BASE_URL: api.url,
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/cost {4}actual n\/a/);
      expect(run.stdout).toMatch(/model {3}model: "claude-opus-6" is not in forkcache's model catalogue/);
      expect(run.stdout).not.toMatch(/NaN/);
    } finally {
      await api.close();
    }
  });
});
