import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { forkcache, lastJson } from './run-cli.ts';

// `--max-usd` / a plan's `maxUsd` as a user runs them: the real command in child processes, on
// the embedded emulator (the refactor model renames across the sample repository's 8 files).
const ROOT = process.cwd();
const dir = mkdtempSync(join(tmpdir(), 'fc-max-usd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function plan(extra: Record<string, unknown>): { path: string; runDir: string } {
  const workspace = mkdtempSync(join(dir, 'ws-'));
  cpSync(join(ROOT, 'examples/sample-repo'), workspace, { recursive: true });
  const parent = JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>;
  const parentPath = join(workspace, '..', `${workspace.split('/').at(-1)}-parent.json`);
  writeFileSync(parentPath, JSON.stringify({ ...parent, tools: TOOL_DECLARATIONS }));
  const files = ['lib/http.ts', 'features/users.ts', 'features/orders.ts', 'features/invoices.ts'];
  const runDir = join(workspace, '..', `${workspace.split('/').at(-1)}-runs`);
  const path = `${runDir}.plan.json`;
  writeFileSync(
    path,
    JSON.stringify({
      parent: parentPath,
      directives: files.map((f) => `rename fetchData to loadData in src/${f}`),
      workspace,
      runDir,
      allow: ['read_file', 'edit_file', 'write_file', 'grep'],
      limits: { maxTokens: 256 },
      emulator: { script: 'refactor', latency: 'off' },
      ...extra,
    }),
  );
  return { path, runDir };
}

describe('forkcache run --max-usd', () => {
  it("stops under the plan's cap (the ledger says so), exits 3 with the resume command; resume under a higher cap finishes", async () => {
    const { path } = plan({ maxUsd: 0.03 });
    const run = await forkcache(['run', path, '--json', '--api', 'emulator']);
    expect(run.code).toBe(3);
    const summary = lastJson(run.stdout);
    expect(summary.cost_usd.actual).toBeLessThanOrEqual(0.03);
    expect(summary.spend_cap).toMatchObject({ max_usd: 0.03, stopped: true });
    const stopped = (summary.fork_results as { error: { code: string } | null }[]).filter(
      (f) => f.error?.code === 'SPEND_CAP_MAX_USD',
    );
    expect(stopped.length).toBeGreaterThan(0);
    const runDir = summary.run_dir as string;
    expect(run.stderr).toContain(
      `stopped: the run's spend cap of $0.03 was reached ($${(summary.spend_cap.spent_usd as number).toFixed(4)} spent`,
    );
    // twice the cap (no fork done), plus each stopped fork's next turn held at its worst case
    // when the next session sends it again on a cold cache
    const next = summary.spend_cap.next_max_usd as number;
    expect(next).toBeGreaterThan(0.06 + 4 * 0.03);
    expect(run.stderr).toContain(
      `continue with: forkcache resume ${runDir} --max-usd ${next.toFixed(2)} (the cap counts the whole run, every pass)`,
    );

    const resumed = await forkcache(['resume', runDir, '--json', '--api', 'emulator', '--max-usd', next.toFixed(2)]);
    expect(resumed.code).toBe(0);
    const after = lastJson(resumed.stdout);
    expect(after.forks).toMatchObject({ total: 4, completed: 4 });
    expect(after.spend_cap).toMatchObject({ max_usd: next, stopped: false });
    expect(after.cost_usd.actual).toBeGreaterThan(summary.cost_usd.actual); // the whole run, both sessions
  }); // child processes: a bound for a loaded machine, not a timing

  it('--max-usd overrides the plan and is checked: a bad amount exits 2 naming the flag', async () => {
    const { path } = plan({ maxUsd: 100 });
    const bad = await forkcache(['run', path, '--max-usd', '0', '--api', 'emulator']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-usd: must be above 0 (got "0")');
    // a cap below what one request could cost stops the run before anything is sent
    const tiny = await forkcache(['run', path, '--max-usd', '0.001', '--json', '--api', 'emulator']);
    expect(tiny.code).toBe(3);
    const summary = lastJson(tiny.stdout);
    expect(summary.requests.turns).toBe(0);
    expect(summary.spend_cap).toMatchObject({ max_usd: 0.001, spent_usd: 0, stopped: true, stopped_forks: 4 });
  });
});
