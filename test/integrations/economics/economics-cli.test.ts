import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliArgs, forkcache as forkcacheInProcess } from '../../cli/run-cli.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run the command in this process (test/cli/run-cli.ts: the same `main` as the process entry,
 * without a node process and a module graph per call). The first test runs it as a child
 * process, as a user would, so the process entry's output and exit status stay covered here.
 */
async function forkcache(...args: string[]): Promise<Run> {
  const run = await forkcacheInProcess(args);
  return { status: run.code, stdout: run.stdout, stderr: run.stderr };
}

/** Run the real command as a child process. */
function forkcacheProcess(...args: string[]): Run {
  const run = spawnSync(process.execPath, [...cliArgs(), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const SEED_ARGS = [
  'economics',
  '--prefix',
  '48500',
  '--directive-tokens',
  '200',
  '--children',
  '5',
  '--model',
  'claude-sonnet-4-6',
];

describe('forkcache economics', () => {
  it('--json reproduces the seed figures under both conventions (as a child process)', () => {
    const run = forkcacheProcess(...SEED_ARGS, '--convention', 'both', '--json');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = JSON.parse(run.stdout) as Record<
      'seed' | 'real',
      {
        perChild: { children: string; tokenEquivalents: number }[];
        fork: { tokenEquivalents: number };
        breakEven: unknown;
      }
    >;
    expect(out.seed.perChild.map((c) => [c.children, c.tokenEquivalents])).toEqual([
      ['1', 48_700],
      ['2-5', 5_050],
    ]);
    expect(out.seed.fork.tokenEquivalents).toBe(68_900);
    expect(out.real.perChild.map((c) => [c.children, c.tokenEquivalents])).toEqual([
      ['1', 60_825],
      ['2-5', 5_050],
    ]);
    expect(out.real.breakEven).toEqual({ vsNoCache: 2, vsFreshAgents: null });
  });

  it('per model: Opus 5.5 at 0.05x saves 95% fork-side, Fable 5.2 97.5%, Haiku 5.5 priced in band B', async () => {
    const args = [
      'economics',
      '--prefix',
      // the old spelling --directive still works, hidden (its name is plan's directive template)
      '100000',
      '--directive',
      '200',
      '--children',
      '8',
      '--warm-parent',
      '--date',
      '2026-11-30',
      '--json',
    ];
    const opus = (
      JSON.parse((await forkcache(...args, '--model', 'claude-opus-5-5')).stdout) as { real: Record<string, unknown> }
    ).real;
    expect(opus).toMatchObject({ model: 'claude-opus-5-5', readMultiplier: 0.05, forkSideSavings: 0.95, band: null });
    const compare = JSON.parse((await forkcache(...args, '--compare')).stdout) as {
      compare: { model: string; savingsVsNoCache: number; forkSideSavings: number; allInSavings: number }[];
    };
    const row = (model: string) => compare.compare.find((r) => r.model === model);
    expect(row('claude-fable-5-2')).toMatchObject({ readMultiplier: 0.025, forkSideSavings: 0.975 });
    expect(row('claude-haiku-5-5')).toMatchObject({ band: 'B', readMultiplier: 0.1 });
    expect(row('claude-sonnet-5-5')).toMatchObject({ readMultiplier: 0.05 });
    for (const row of compare.compare) expect(row.allInSavings).toBeLessThan(row.forkSideSavings);
    const retired = await forkcache(...args, '--model', 'claude-opus-4-1');
    expect(retired.status).toBe(2);
    expect(retired.stderr).toMatch(/--model: "claude-opus-4-1" has no prices \(retired; use claude-opus-5-5\)/);
  });

  it('prints a readable table with per-child costs, totals, savings and break-even N', async () => {
    const run = await forkcache(...SEED_ARGS, '--convention', 'seed');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\s+1\s+0\s+48,500\s+200\s+48,700\s+\$0\.146100$/m);
    expect(run.stdout).toMatch(/^\s+2-5\s+48,500\s+0\s+200\s+5,050\s+\$0\.015150$/m);
    expect(run.stdout).toMatch(/no cache\s+243,500\s+\$0\.730500\s+fork saves 71\.70%/);
    expect(run.stdout).toContain('break-even N: vs no cache 2, vs fresh agents 4');
  });

  it("--date before a model's first price row exits 2 naming that first date", async () => {
    const early = await forkcache(...SEED_ARGS.slice(0, -2), '--model', 'claude-sonnet-5-5', '--date', '2026-09-01');
    expect(early.status).toBe(2);
    expect(early.stderr).toContain(
      '--date: 2026-09-01 is before the first price of claude-sonnet-5-5 in the catalogue (2026-09-28); use a date from 2026-09-28 on',
    );
  });

  it('--date that is not a calendar day exits 2', async () => {
    const impossible = await forkcache(...SEED_ARGS, '--date', '2026-02-31');
    expect(impossible.status).toBe(2);
    expect(impossible.stderr).toContain('--date: not a calendar date (got "2026-02-31")');
  });

  it('--compare --date lists only the models that existed on that date', async () => {
    const run = await forkcache(...SEED_ARGS.slice(0, -2), '--compare', '--date', '2026-10-01', '--json');
    const models = (JSON.parse(run.stdout) as { compare: { model: string }[] }).compare.map((r) => r.model);
    expect(models).toContain('claude-sonnet-5-5');
    expect(models).not.toContain('claude-fable-5-2'); // first priced 2026-11-09
  });

  it('exits 2 with a message naming the flag on bad input', async () => {
    const negative = await forkcache(...SEED_ARGS, '--prefix', '-5');
    expect(negative.status).toBe(2);
    expect(negative.stderr).toContain('--prefix: expected a non-negative integer (got "-5")');
    expect(negative.stdout).toBe('');
    const model = await forkcache(...SEED_ARGS, '--model', 'claude-nope');
    expect(model.status).toBe(2);
    expect(model.stderr).toContain('--model: "claude-nope" is not in the model catalogue');
  });

  it('says plainly that the default prices the first request of each child only', async () => {
    const run = await forkcache(...SEED_ARGS);
    expect(run.stdout).toMatch(
      /^forkcache economics: claude-sonnet-4-6, the first request of each child only: input tokens, none of the turns after it \(--whole-run prices every turn\)$/m,
    );
    expect(run.stdout).toContain('prices of claude-sonnet-4-6 on ');
    expect(run.stdout).toContain("Anthropic's pricing page (a stored copy), retrieved 2026-11-09");
  });

  it('--whole-run prices every turn with the estimator, its assumptions listed', async () => {
    const run = await forkcache(
      'economics',
      '--prefix',
      '100000',
      '--children',
      '8',
      '--whole-run',
      '--date',
      '2026-11-30',
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^forkcache economics --whole-run: 8 forks of claude-opus-5-5, every turn priced$/m);
    expect(run.stdout).toMatch(/^estimate {2}\$\d+\.\d+ for 32 requests of 8 forks/m);
    expect(run.stdout).toContain('each child reads a file of 2,000 tokens (--file-tokens)');
    expect(run.stdout).toMatch(/^assumed:$/m);
  });

  it('--sweep prints a table, and writes a chart with the price source on it', async () => {
    const chart = join(mkdtempSync(join(tmpdir(), 'fc-econ-')), 'sweep.svg');
    const run = await forkcache(
      'economics',
      '--sweep',
      'forks=1..64',
      '--sweep',
      'prefix=10K,100K',
      '--whole-run',
      '--date',
      '2026-11-30',
      '--chart',
      chart,
    );
    expect(run.stderr).toBe(`chart: ${chart}\n`);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^100K +64 +\$\d/m);
    expect(run.stdout).toMatch(/^10K +1 +\$\d/m);
    const svg = readFileSync(chart, 'utf8');
    expect(svg).toMatch(/^<svg/);
    expect(svg).toContain('forkcache economics: claude-opus-5-5');
    expect(svg).toContain('retrieved 2026-11-09');
    expect(svg).toContain('fresh agents, prefix 100K');
  });

  it('--sweep --csv prints one row per point; --no-chart draws nothing; a bad sweep exits 2', async () => {
    const run = await forkcache('economics', '--sweep', 'forks=1,2', '--prefix', '10000', '--csv', '--no-chart');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^model,prefix,forks,/);
    expect(existsSync(join(ROOT, 'forkcache-economics.svg'))).toBe(false);
    const bad = await forkcache('economics', '--sweep', 'forks=0..4', '--prefix', '10000', '--no-chart');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--sweep forks=0..4: a range a..b needs 1 <= a <= b');
  });

  it("--ttl 30m | 12h prices an OpenAI model's Responses writes; another provider's model is refused, naming --ttl", async () => {
    const gpt = [...SEED_ARGS.slice(0, -1), 'gpt-5', '--date', '2026-12-01', '--json'];
    const run = await forkcache(...gpt, '--ttl', '12h');
    expect(run.status).toBe(0);
    const real = (JSON.parse(run.stdout) as { real: { ttl: string; perChild: { tokenEquivalents: number }[] } }).real;
    expect(real.ttl).toBe('12h');
    // gpt-5's row writes at 1x for either lifetime: child 1 pays 48,500 + 200
    expect(real.perChild[0]!.tokenEquivalents).toBe(48_700);
    const anthropic = await forkcache(...SEED_ARGS, '--ttl', '30m');
    expect(anthropic.status).toBe(2);
    expect(anthropic.stderr).toMatch(/--ttl: 30m is a lifetime of OpenAI's Responses API; claude-sonnet-4-6/);
    const bad = await forkcache(...SEED_ARGS, '--ttl', '2h');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('expected 5m, 1h, 30m or 12h');
  });
});
