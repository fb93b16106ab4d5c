import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { cliArgs } from './run-cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function transcripts(runs: string): string[] {
  if (!existsSync(runs)) return [];
  return readdirSync(runs).flatMap((fan) =>
    existsSync(join(runs, fan, 'forks'))
      ? readdirSync(join(runs, fan, 'forks')).map((f) => readFileSync(join(runs, fan, 'forks', f), 'utf8'))
      : [],
  );
}

async function startRun(): Promise<{
  dir: string;
  child: ReturnType<typeof spawn>;
  out: { stdout: string; stderr: string };
  exited: Promise<number | null>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'fc-int-'));
  const parent = {
    ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
    tools: TOOL_DECLARATIONS,
  };
  writeFileSync(
    join(dir, 'plan.json'),
    JSON.stringify({
      parent,
      directives: ['run `sleep 30` and report', 'run `sleep 30` and report'],
      workspace: '.',
      runDir: 'runs',
      allow: ['bash'],
      emulator: { script: 'refactor', latency: 'off' },
    }),
  );
  const child = spawn(process.execPath, [...cliArgs(), 'run', join(dir, 'plan.json'), '--json'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ANTHROPIC_API_KEY: '' },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => (out.stdout += d));
  child.stderr!.on('data', (d: Buffer) => (out.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // both forks are inside their (long) bash call
  while (transcripts(join(dir, 'runs')).filter((t) => t.includes('"tool-start"')).length < 2)
    await new Promise((r) => setTimeout(r, 20));
  return { dir, child, out, exited };
}

describe('Ctrl-C during a run (SIGINT)', () => {
  it('cancels the running forks, flushes their transcripts, prints the summary and exits 130', async () => {
    const { dir, child, out, exited } = await startRun();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(out.stderr).toMatch(/interrupted: cancelling the running forks/);
    const summary = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as {
      interrupted: boolean;
      forks: Record<string, number>;
    };
    expect(summary.interrupted).toBe(true);
    expect(summary.forks).toMatchObject({ total: 2, cancelled: 2 });
    for (const text of transcripts(join(dir, 'runs'))) expect(text).toMatch(/"type":"end","status":"cancelled"/);
  });

  it('a second Ctrl-C still ends with the summary (issue 15, case 2: it used to quit without one)', async () => {
    const { child, out, exited } = await startRun();
    child.kill('SIGINT');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const summary = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as {
      interrupted: boolean;
      forks: Record<string, number>;
    };
    expect(summary.interrupted).toBe(true);
    expect(summary.forks.total).toBe(2);
    expect(summary.forks['completed']).toBe(0);
  });
});
