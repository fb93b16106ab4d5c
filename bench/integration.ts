import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { costNano, nanoToUsd } from '../src/core/ledger/cost.ts';
import { BUILTIN_CATALOGUE, findModel } from '../src/core/models/catalogue.ts';
import { integrationCounts } from '../src/cli/integrate/report.ts';
import { transcriptPath } from '../src/core/run-dir/files.ts';
import { readIntegration } from '../src/core/run-dir/integration.ts';
import { readTranscript, type TranscriptTurn } from '../src/core/run-dir/transcript-reader.ts';
import { fixupCostOf, maxMean } from './integration-fixups.ts';
import { TOOL_DECLARATIONS } from '../src/core/tools/declarations.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

/*
 * Issue 42: what the integration step costs. One Go package of FORKS files, a rename of a
 * function used in every file (one fork a file, whole worktrees, on the embedded emulator with
 * latency off); one file in 20 also calls `strings.Join`, which a whole-word rename of `Join`
 * takes with it, so `go build` of the merged package fails (`undefined: strings.Concat`) and
 * the forks of those files get a fix-up turn (the `refactor` model puts the qualified name
 * back). Figures: the integration check's runs, the fix-up turns' cost against the fan-out's,
 * and each fix-up turn against re-running its fork from scratch and against its first run
 * alone, from the fork's transcript (the ledger's requests; bench/integration-fixups.ts). `forkcache run` is the CLI as a user runs it (bin/forkcache.js).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/forkcache.js');
const BREAK_EVERY = 20;

const ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
  NO_COLOR: '1',
};
delete ENV['ANTHROPIC_API_KEY'];

const hasGo = (): boolean => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** The package, `files` files: `Join` defined in one and called in the others; one in BREAK_EVERY also calls strings.Join. */
function goPackage(dir: string, files: number): string[] {
  const names: string[] = [];
  writeFileSync(join(dir, 'go.mod'), 'module example.com/demo\n\ngo 1.19\n');
  writeFileSync(join(dir, 'join.go'), 'package demo\n\nfunc Join(a, b string) string { return a + b }\n');
  names.push('join.go');
  for (let i = 1; i < files; i++) {
    const name = `f${String(i).padStart(3, '0')}.go`;
    const breaks = i % BREAK_EVERY === BREAK_EVERY - 1;
    writeFileSync(
      join(dir, name),
      breaks
        ? `package demo\n\nimport "strings"\n\nfunc Use${i}() string { return Join("a", strings.Join(nil, "")) }\n`
        : `package demo\n\nfunc Use${i}() string { return Join("a", "b") }\n`,
    );
    names.push(name);
  }
  const git = (...args: string[]): void => void execFileSync('git', ['-C', dir, ...args], { env: ENV });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'base');
  return names;
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { env: ENV });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 })),
  );
}

const round = (n: number, digits = 3): number => Number(n.toPrecision(digits));

export async function integrationSuite({ quick }: SuiteOptions): Promise<SuiteResult> {
  const title = 'Integration: check runs and fix-up cost (issue 42)';
  if (!hasGo()) return { name: 'integration', title, rows: [{ skipped: 'no `go` on PATH (Debian golang-go)' }] };
  const forks = quick ? 40 : 200;
  const work = mkdtempSync(join(tmpdir(), 'fc-bench-integration-'));
  try {
    const repo = join(work, 'repo');
    mkdirSync(repo);
    const files = goPackage(repo, forks);
    const breaking = files.filter((f) => readFileSync(join(repo, f), 'utf8').includes('strings.Join')).length;
    const parent: Record<string, unknown> = {
      ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
      tools: TOOL_DECLARATIONS,
    };
    const goEnv = `export GOCACHE=${join(tmpdir(), `forkcache-bench-gocache-${process.getuid?.() ?? 'user'}`)} GOFLAGS=-mod=mod GOPROXY=off;`;
    const planPath = join(work, 'plan.json');
    writeFileSync(
      planPath,
      JSON.stringify({
        parent,
        directives: files.map((file) => ({ directive: `rename Join to Concat in ${file}`, file })),
        workspace: repo,
        runsDir: 'runs',
        isolation: 'worktree',
        sandbox: 'none',
        allow: ['read_file', 'edit_file', 'write_file'],
        emulator: { script: 'refactor', latency: 'off' },
        integrationCheck: `${goEnv} go build ./... && go vet ./...`,
        integrationRounds: 2,
      }),
    );
    const ran = await run(['run', planPath, '--json']);
    if (process.env['BENCH_INTEGRATION_LOG']) writeFileSync(process.env['BENCH_INTEGRATION_LOG'], ran.stderr);
    const runs = join(work, 'runs');
    const found = existsSync(runs) && readdirSync(runs).find((d) => existsSync(join(runs, d, 'manifest.json')));
    const integration = found ? readIntegration(join(runs, found)) : undefined;
    if (!found || !integration) throw new Error(`bench integration: forkcache run exited ${ran.code}: ${ran.stderr}`);
    const dir = join(runs, found);
    const counts = integrationCounts(integration);

    // each fixed fork: its first run (the turns up to the fix-up prompt) against its fix-up turn (the turns after)
    const info = findModel(String(parent['model']))!;
    const usd = (turns: readonly TranscriptTurn[]): number =>
      nanoToUsd(
        turns.reduce((n, t) => n + costNano(t.request.usage, info, t.request.sentAt, BUILTIN_CATALOGUE).total, 0),
      );
    const fixed = integration.repos.flatMap((r) => r.forks).filter((f) => f.fixups > 0);
    const costs = fixed.flatMap((f) => {
      const cost = fixupCostOf(readTranscript(transcriptPath(dir, f.fork_id)).turns, usd);
      return cost ? [{ fork_id: f.fork_id, ...cost }] : [];
    });
    const overFirst = maxMean(costs.map((c) => c.fixupUsd / c.firstUsd));
    const overRerun = maxMean(costs.map((c) => c.fixupUsd / c.rerunUsd));
    const cached = costs.filter((c) => c.historyCached).length;
    // each fixed fork's figures, when asked for (BENCH_INTEGRATION_FORKS=file.json)
    const perFork = process.env['BENCH_INTEGRATION_FORKS'];
    if (perFork) writeFileSync(perFork, JSON.stringify(costs, null, 1));
    const fanout = integration.fanout_cost_usd ?? Number.NaN;
    const fixupCost = integration.fixup_cost_usd ?? Number.NaN;
    const checkRuns = integration.repos.reduce((n, r) => n + r.check_runs, 0);
    return {
      name: 'integration',
      title,
      rows: [
        {
          forks,
          breaking,
          exit: ran.code,
          run_seconds: round(ran.seconds),
          integrated: counts.integrated,
          left_out: counts.leftOut,
          passed: counts.passed,
          check_runs: checkRuns,
          fixup_rounds: integration.repos.reduce((n, r) => n + r.fixup_rounds, 0),
          fixup_turns: fixed.reduce((n, f) => n + f.fixups, 0),
          fanout_usd: round(fanout, 4),
          fixup_usd: round(fixupCost, 4),
          fixup_over_fanout: round(fixupCost / fanout),
          fixup_over_rerun_max: overRerun.max,
          fixup_over_rerun_mean: overRerun.mean,
          fixup_over_first_run_max: overFirst.max,
          fixup_over_first_run_mean: overFirst.mean,
          fixups_history_cached: `${cached}/${costs.length}`,
        },
      ],
      conclusion:
        `${forks} forks, ${breaking} of them breaking \`go build\` of the merged package: ` +
        `${checkRuns} integration-check run(s), the fix-up turns cost ${(100 * (fixupCost / fanout)).toFixed(2)}% of the fan-out, ` +
        `a fix-up turn at most ${overRerun.max}× (mean ${overRerun.mean}×) what re-running its fork from scratch costs ` +
        `(its first run again, then the same fix), ${overFirst.max}× (mean ${overFirst.mean}×) its first run alone; ` +
        `${cached} of ${costs.length} fix-ups read the fork's history from the cache, ` +
        `exit ${ran.code}.`,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
