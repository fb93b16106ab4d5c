import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import type { ScriptedModel } from '../../src/integrations/emulator/scripts/types.ts';
import { forkcache, lastJson } from '../cli/run-cli.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { exampleParent } from './helpers.ts';

/*
 * A fork leaves in its worktree a path git refuses to add, so forkcache's commit of the fork
 * fails. The run says `failed (GIT_FAILED)`; the transcript, which `status`, `resume` and
 * `merge` read, must say the same, or the work is dropped as "completed, no change". The paths
 * are made directly in the worktree (as bash, or any other way in, would): the file tools
 * refuse `.git.` themselves (protected-paths.test.ts) and never make FIFOs or symlinks.
 */
const REPORT = 'Scope: a.ts\nResult: done\nKey files: a.ts\nFiles changed: a.ts\nIssues: none';

const TRIGGERS: Record<string, (tree: string) => void> = {
  'a file named .git.': (tree) => writeFileSync(join(tree, '.git.'), '[core]\n'),
  'a FIFO where a tracked file was': (tree) => {
    rmSync(join(tree, 'b.ts'));
    execFileSync('mkfifo', [join(tree, 'b.ts')]);
  },
  'a gitlink and a .gitmodules that is a symlink': (tree) => {
    mkdirSync(join(tree, 'sub'));
    git(join(tree, 'sub'), 'init', '--quiet');
    git(join(tree, 'sub'), 'commit', '--quiet', '--allow-empty', '-m', 'sub');
    writeFileSync(join(tree, 'modules'), '[submodule "sub"]\n\tpath = sub\n\turl = ../evil\n');
    symlinkSync('modules', join(tree, '.gitmodules'));
  },
};

let runDir = '';
let trigger: ((tree: string) => void) | undefined;
/** Renames in a.ts (a real change to commit), plants the trigger in every worktree, reports done. */
const planter: ScriptedModel = {
  name: 'commit-breaker',
  respond() {
    for (const fanout of readdirSync(runDir)) {
      const trees = join(runDir, fanout, 'worktrees');
      if (!trigger || !existsSync(trees)) continue;
      for (const fork of readdirSync(trees)) {
        writeFileSync(join(trees, fork, 'a.ts'), 'export const loadData = 1;\n');
        trigger(join(trees, fork));
      }
    }
    return { content: [{ type: 'text', text: REPORT }] };
  },
};

let emulator: Awaited<ReturnType<typeof startEmulator>>;
beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off', script: planter });
});
afterAll(() => emulator.close());

describe('a commit git refuses ends the fork failed in every view of the run', () => {
  for (const [name, plant] of Object.entries(TRIGGERS))
    it(name, async () => {
      const repo = repoWith({ 'a.ts': 'export const fetchData = 1;\n', 'b.ts': 'export const b = 2;\n' });
      runDir = mkdtempSync(join(tmpdir(), 'fc-runs-'));
      const plan = join(mkdtempSync(join(tmpdir(), 'fc-plan-')), 'plan.json');
      const fields = { parent: exampleParent(), directives: ['rename fetchData'], workspace: repo, runDir };
      writeFileSync(plan, JSON.stringify({ ...fields, allow: ['read_file'], isolation: 'worktree' }));
      const env = { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: emulator.url };

      trigger = plant;
      const ran = await forkcache(['run', plan, '--json'], env);
      trigger = undefined;
      expect(ran.code).toBe(1);
      const fork = lastJson(ran.stdout)['fork_results'][0];
      expect([fork.status, fork.error.code]).toEqual(['failed', 'GIT_FAILED']);
      const dir = join(runDir, readdirSync(runDir)[0]!);

      const status = await forkcache(['status', dir, '--json'], env);
      expect(lastJson(status.stdout)['forks'].map((f: any) => f.status)).toEqual(['failed']);
      // resume continues the fork (it is not done); git still refuses the path, so it is failed again
      const resumed = await forkcache(['resume', dir, '--json'], env);
      expect(resumed.code).toBe(1);
      expect(lastJson(resumed.stdout)['fork_results'][0].error.code).toBe('GIT_FAILED');
      const merged = await forkcache(['merge', dir], env);
      expect(merged.stdout + merged.stderr).toMatch(/f01\s+not completed \(failed\)/);
      expect(merged.stdout).not.toMatch(/no change/);
      expect(git(repo, 'log', '--format=%s')).toBe('base');
      // the failed fork's worktree is kept until clean, which takes it whole (its disk too, when it has one)
      const tree = join(dir, 'worktrees', fork.fork_id);
      expect(existsSync(tree)).toBe(true);
      const cleaned = await forkcache(['clean', dir, '--force'], env);
      expect(cleaned.code, cleaned.stderr).toBe(0);
      expect(existsSync(tree)).toBe(false);
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(tree);
      expect(existsSync(join(dir, 'disks', `${fork.fork_id}.img`))).toBe(false);
    });
});
