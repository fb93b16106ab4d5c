import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refactorModel } from '../../src/integrations/emulator/scripts/refactor.ts';
import type { ScriptedModel } from '../../src/integrations/emulator/scripts/types.ts';
import { type Emulator, startEmulator } from '../../src/integrations/emulator/start.ts';
import { readTranscript } from '../../src/core/run-dir/transcript-reader.ts';
import { cliArgs, exampleParent, forkcacheProcess as forkcache, type RunResult } from './run-cli.ts';

// Issue 24, route 6: after a kill -9 mid-run, two `forkcache resume` started together both
// exited 0: 56 requests where one resume needs 36, 22 of 24 renames applied twice
// (`fetchDataXX`), two `end` records per transcript, and the report refused the run. Now one
// takes the run directory's writer lock and the other refuses at once, naming it.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FORKS = 3;

/**
 * The refactor model, but a request that answers the fork's own tool calls (its second turn on)
 * waits while `held` is set: the run is stopped at a known point, and a resume holds its lock
 * for as long as the test needs, with no time window anywhere.
 */
let held = true;
let release: () => void = () => {};
let opened = new Promise<void>((resolve) => (release = resolve));
let parked = 0;
let received = 0; // requests the model was asked to answer
const gated: ScriptedModel = {
  name: 'gated',
  respond: async (input) => {
    received += 1;
    const last = input.request.messages.at(-1);
    // a fork's first request ends with its directive (text after the placeholders); later ones with results only
    const hasResults = Array.isArray(last?.content) && last.content.every((b) => b.type === 'tool_result');
    if (hasResults && held) {
      parked += 1;
      await opened;
    }
    return refactorModel.respond(input);
  },
};

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off', scripts: { gated }, script: 'gated' });
});
afterAll(async () => {
  release();
  await emulator.close();
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

function transcripts(runs: string): string[] {
  const fan = readdirSync(runs).find((d) => existsSync(join(runs, d, 'forks')));
  return fan ? readdirSync(join(runs, fan, 'forks')).map((f) => join(runs, fan, 'forks', f)) : [];
}
const records = (file: string, type: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"type":"${type}"`)).length;

describe('one writer per run directory (issue 24, route 6)', () => {
  it('two resumes started together after a kill -9: one does the work, once; the other refuses naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-lock-'));
    const runs = join(dir, 'runs');
    for (let i = 1; i <= FORKS; i++) writeFileSync(join(dir, `f${i}.ts`), `export const fetchData = ${i};\n`);
    const parent = exampleParent();
    const plan = {
      parent,
      directives: Array.from({ length: FORKS }, (_, i) => `rename fetchData to fetchDataX in f${i + 1}.ts`),
      workspace: '.',
      runDir: 'runs',
      limits: { maxThreads: 1 },
    };
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
    const env = { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: emulator.url };

    const run = spawn(process.execPath, [...cliArgs(), 'run', join(dir, 'plan.json')], {
      cwd: ROOT,
      stdio: 'ignore',
      env: { ...process.env, ...env },
    });

    const killed = new Promise((resolve) => run.on('exit', (_c, signal) => resolve(signal)));
    // every fork has read its file and waits for its next turn: kill -9 the whole process there
    await until(() => parked >= FORKS);
    run.kill('SIGKILL');
    expect(await killed).toBe('SIGKILL');
    const files = transcripts(runs);
    expect(files).toHaveLength(FORKS);
    const startsBefore = files.map((f) => records(f, 'request-start'));

    parked = 0;
    const releaseKilled = release; // the killed run's parked requests: their client is gone
    opened = new Promise<void>((resolve) => (release = resolve));
    releaseKilled();
    received = 0;
    const both = [forkcache(['resume', runs, '--json'], env), forkcache(['resume', runs, '--json'], env)];
    // the winner's forks wait at the gate holding the lock; the other has to give up meanwhile
    const loser = await Promise.race(both.map((p, i) => p.then((r) => ({ r, i }))));
    expect(loser.r.code).toBe(2);
    expect(loser.r.stderr).toMatch(/is being written by another forkcache: pid \d+ \(.*resume.*\), since \d{4}-/);
    held = false;
    release();
    const winner = (await both[1 - loser.i]) as RunResult;
    expect(winner.code).toBe(0);

    // the work was done once: one end per fork, each rename applied once, every request in a transcript
    for (const f of files) {
      expect(records(f, 'end')).toBe(1);
      expect(readTranscript(f).end?.status).toBe('completed');
    }
    for (let i = 1; i <= FORKS; i++)
      expect(readFileSync(join(dir, `f${i}.ts`), 'utf8')).toBe(`export const fetchDataX = ${i};\n`);
    const written = files.reduce((n, f, i) => n + records(f, 'request-start') - startsBefore[i]!, 0);
    expect(received).toBe(written);
  });
});
