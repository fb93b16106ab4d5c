import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { cliArgs, forkcache, lastJson } from './run-cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Resolve once `check` holds, looking again each time the event loop turns (no time window). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

function transcriptLines(runs: string, forkSuffix: string): string[] {
  if (!existsSync(runs)) return [];
  const fan = readdirSync(runs).find((d) => existsSync(join(runs, d, 'forks')));
  if (!fan) return [];
  const file = readdirSync(join(runs, fan, 'forks')).find((f) => f.endsWith(`${forkSuffix}.jsonl`));
  return file
    ? readFileSync(join(runs, fan, 'forks', file), 'utf8')
        .split('\n')
        .filter(Boolean)
    : [];
}

describe('the whole process killed mid fan-out (SIGKILL)', () => {
  it('forkcache resume finishes the rest; no completed fork re-runs; the interrupted tool call is reported as interrupted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-kill-'));
    const runs = join(dir, 'runs');
    const parent = {
      ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
      tools: TOOL_DECLARATIONS,
    };
    writeFileSync(join(dir, 'a.ts'), 'export const a = 1;\n');
    const plan = {
      parent,
      directives: ['read a.ts and report', 'run `sleep 20` and report'],
      workspace: '.',
      runDir: 'runs',
      allow: ['read_file', 'bash'],
      limits: { maxThreads: 1, concurrency: 1 },
      emulator: { script: 'refactor', latency: 'off' },
    };
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));

    const child = spawn(process.execPath, [...cliArgs(), 'run', join(dir, 'plan.json'), '--json'], {
      cwd: ROOT,
      stdio: 'ignore',
      env: { ...process.env, ANTHROPIC_API_KEY: '' },
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    // the first fork finishes; the second is inside its bash call: kill the whole process there
    await until(
      () =>
        transcriptLines(runs, 'f01').some((l) => l.includes('"type":"end"')) &&
        transcriptLines(runs, 'f02').some((l) => l.includes('"tool-start"')),
    );
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const before01 = transcriptLines(runs, 'f01').length;
    expect(transcriptLines(runs, 'f02').some((l) => l.includes('"tool-end"'))).toBe(false);

    const resumed = await forkcache(['resume', runs, '--json'], { ANTHROPIC_API_KEY: '' });
    // the interrupted command never finished: the fork says so, ends not_done, and the run exits 1 (issue 23)
    expect(resumed.code).toBe(1);
    const summary = lastJson(resumed.stdout);
    expect(summary.forks).toMatchObject({ total: 2, completed: 1, not_done: 1 });
    expect(resumed.stderr).toMatch(/not_done {2}fo\S+-f02: FORK_NOT_DONE: the fork's report says Result: not done/);
    expect(transcriptLines(runs, 'f01')).toHaveLength(before01); // the completed fork was not re-run
    const f02 = transcriptLines(runs, 'f02');
    expect(f02.filter((l) => l.includes('"tool-start"'))).toHaveLength(1); // the bash call was never repeated
    const report = summary.fork_results[1].report;
    expect(report.issues).toMatch(/bash failed: This tool call was interrupted/);
  });
});
