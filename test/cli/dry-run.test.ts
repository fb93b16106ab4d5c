import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/integrations/emulator/start.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { forkcache, lastJson } from './run-cli.ts';

// `forkcache run PLAN --dry-run` against an emulator this test starts (as the real API, through
// ANTHROPIC_BASE_URL), so what the dry run sends can be counted on the server's side.
const ROOT = process.cwd();
const dir = mkdtempSync(join(tmpdir(), 'fc-dry-run-'));
let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off', script: 'refactor' });
});
afterAll(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});
const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: emulator.url });

/** A rename across the sample repository: one directive per file, on a copy of it. */
function renamePlan(name: string): { path: string; runDir: string; workspace: string } {
  const workspace = join(dir, `${name}-ws`);
  cpSync(join(ROOT, 'examples/sample-repo'), workspace, { recursive: true });
  const files = ['lib/http.ts', ...readdirSync(join(workspace, 'src/features')).map((f) => `features/${f}`)];
  const runDir = join(dir, `${name}-runs`);
  const path = join(dir, `${name}.json`);
  // the example parent with every file tool declared (the refactor model edits only with edit_file or write_file)
  const parent = JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, `${name}-parent.json`), JSON.stringify({ ...parent, tools: TOOL_DECLARATIONS }));
  writeFileSync(
    path,
    JSON.stringify({
      parent: join(dir, `${name}-parent.json`),
      directives: files.map((f) => `rename fetchData to loadData in src/${f}`),
      workspace,
      runDir,
      allow: ['read_file', 'edit_file', 'write_file', 'grep', 'glob', 'list_dir'],
    }),
  );
  return { path, runDir, workspace };
}

describe('forkcache run --dry-run', () => {
  it('sends nothing but token counts, writes no run directory, and freezes the prefix the run sends', async () => {
    const plan = renamePlan('rename');
    const before = emulator.stats().requests;
    const dry = await forkcache(['run', plan.path, '--dry-run', '--json', '--api', 'anthropic'], env());
    expect(dry.code).toBe(0);
    const after = emulator.stats().requests;
    const report = lastJson(dry.stdout);
    expect(after.messages - before.messages).toBe(0);
    expect(after.countTokens - before.countTokens).toBe(report.counts.requests);
    expect(report.counts.requests).toBeGreaterThan(0);
    expect(report.counts.how).toMatch(/^counted by count_tokens at the Anthropic API/);
    expect(existsSync(plan.runDir)).toBe(false);
    expect(report).toMatchObject({ dry_run: true, run_dir: null, forks_without_file: 0 });
    expect(report.estimate).toMatchObject({ model: 'claude-opus-5-5', forks: 8, warmups: 0 });
    // every fork edits its file: read, edit, re-read, report
    expect(report.estimate.requests).toBe(8 * 4);

    // Then the run itself: the same prefix, and a cost within 0.5×–2× of the estimate.
    const run = await forkcache(['run', plan.path, '--json', '--api', 'anthropic'], env());
    expect(run.code).toBe(0);
    const summary = lastJson(run.stdout);
    expect(summary.prefix.sha256).toBe(report.prefix.sha256);
    expect(summary.prefix.shared_tokens).toBe(report.prefix.shared_tokens);
    const ratio = report.estimate.cost.usd / summary.cost_usd.actual;
    expect(ratio).toBeGreaterThanOrEqual(0.5);
    expect(ratio).toBeLessThanOrEqual(2);
  }); // two child processes: a bound for a loaded machine, not a timing

  it('prints the estimate with what was counted and what was assumed; a bad --assume exits 2', async () => {
    const plan = renamePlan('text');
    const out = await forkcache(
      ['run', plan.path, '--dry-run', '--api', 'anthropic', '--assume', 'reportOutput=400', '--max-usd', '5'],
      env(),
    );
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(
      /^forkcache run --dry-run: 8 forks of claude-opus-5-5; nothing was sent but \d+ token counts, and no run directory was written$/m,
    );
    expect(out.stdout).toMatch(/^estimate {2}\$\d+\.\d{4} for 32 requests of 8 forks/m);
    expect(out.stdout).toMatch(
      /prices of claude-opus-5-5 on \d{4}-\d{2}-\d{2} \(row from 2026-10-07; Anthropic's pricing page \(a stored copy\), retrieved 2026-11-09/,
    );
    expect(out.stdout).toContain('files: 8 of 8 directives name a file');
    // the assumption the estimate scales with, named with its number (issue 42)
    expect(out.stdout).toContain('turns per fork: 4 (mean 4.0), the report included; a fork that takes more');
    expect(out.stdout).toContain('400 per report');
    expect(out.stdout).toMatch(/--max-usd 5: the estimate is \d+% of it/);
    expect(out.stdout).toContain('fresh agents: each fork replaced by an agent given only the fallback system prompt');
    const bad = await forkcache(['run', plan.path, '--dry-run', '--api', 'anthropic', '--assume', 'turns=9'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--assume: unknown assumption "turns"/);
  });

  it('runs without any key or base URL, on the embedded emulator (as a new user first tries it)', async () => {
    const plan = renamePlan('keyless');
    const dry = await forkcache(['run', plan.path, '--dry-run', '--json'], {
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_BASE_URL: undefined,
    });
    expect(dry.code, dry.stderr).toBe(0);
    const report = JSON.parse(dry.stdout.trim().split('\n').at(-1)!) as {
      dry_run: boolean;
      forks_without_file: number;
      estimate: { forks: unknown };
    };
    expect(report).toMatchObject({ dry_run: true, run_dir: null, forks_without_file: 0 });
    expect(existsSync(plan.runDir)).toBe(false);
  });
});
