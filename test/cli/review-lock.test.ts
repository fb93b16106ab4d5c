import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refactorModel } from '../../src/integrations/emulator/scripts/refactor.ts';
import type { ScriptedModel } from '../../src/integrations/emulator/scripts/types.ts';
import { type Emulator, startEmulator } from '../../src/integrations/emulator/start.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { writePlan } from './review-fixture.ts';
import { cliArgs, forkcache } from './run-cli.ts';

// Issue 33: `clean` during a run took no writer lock and removed a running fork's worktree and
// branch; the fork ended failed (GIT_WORKTREE_TAMPERED) and its edit was in no commit. Now
// `clean` and `merge` take the run's lock and refuse while the run holds it.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// the refactor model, holding each fork's second request (after its first tool call) until released
let release: () => void = () => {};
const opened = new Promise<void>((resolve) => (release = resolve));
let parked = 0;
const gated: ScriptedModel = {
  name: 'gated',
  respond: async (input) => {
    const last = input.request.messages.at(-1);
    if (Array.isArray(last?.content) && last.content.every((b) => b.type === 'tool_result')) {
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

describe('clean and merge take the run writer lock (issue 33)', () => {
  it('clean and merge during a worktree run are refused, and the fork still commits its work', async () => {
    const repo = repoWith({ 'a.ts': 'export const fetchData = 1;\n' });
    const plan = writePlan(repo, ['rename fetchData to loadData in a.ts'], { isolation: 'worktree' });
    const env = { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: emulator.url };
    const run = spawn(process.execPath, [...cliArgs(), 'run', plan], {
      cwd: ROOT,
      stdio: 'ignore',
      env: { ...process.env, ...env },
    });
    const exited = new Promise<number | null>((resolve) => run.on('exit', (code) => resolve(code)));
    await until(() => parked >= 1);
    const runs = join(dirname(plan), 'runs');
    const dir = join(
      runs,
      readdirSync(runs).find((d) => existsSync(join(runs, d, 'manifest.json')))!,
    );

    const clean = await forkcache(['clean', dir, '--force']);
    expect(clean.code).toBe(2);
    expect(clean.stderr).toMatch(/is being written by another forkcache: pid \d+ \(.*run.*\)/);
    const merge = await forkcache(['merge', dir]);
    expect(merge.code).toBe(2);
    expect(merge.stderr).toMatch(/is being written by another forkcache/);

    release();
    expect(await exited).toBe(0);
    const branch = git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/forkcache/');
    expect(git(repo, 'show', `${branch}:a.ts`)).toBe('export const loadData = 1;');
    // once the run is over, both work
    expect((await forkcache(['merge', dir])).code).toBe(0);
    expect((await forkcache(['clean', dir])).code).toBe(0);
  });
});
