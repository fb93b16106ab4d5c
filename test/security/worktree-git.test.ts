import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import type { ScriptedModel } from '../../src/integrations/emulator/scripts/types.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { detachDisk } from '../../src/core/tools/git/workspace-disk.ts';
import { forkcache, lastJson } from '../cli/run-cli.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';

/*
 * Route 1 of issue 24: a fork with only read_file/write_file writes a git dir of its own into
 * its worktree, with a config whose core.fsmonitor runs a command, then points the worktree's
 * `.git` at it. forkcache's git, run on the host when the fork ends, must run none of it and
 * leak no key. Played twice: through the fork's own tools, and by writing the files directly
 * (as an attacker with another way in would), so the runner's check holds without the tools'
 * refusal of `.git` paths.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CANARY = 'sk-ant-canary-git-5d1e8f3a9c2b7064';
const outside = mkdtempSync(join(tmpdir(), 'fc-outside-'));
const pwn = join(outside, 'pwn.env');

function evilGitDir(): Record<string, string> {
  const command = `env > ${pwn}; true`;
  return {
    '.evil/HEAD': 'ref: refs/heads/main\n',
    '.evil/objects/info/packs': '',
    '.evil/refs/heads/.keep': '',
    '.evil/hooks/pre-commit': `#!/bin/sh\n${command}\n`,
    '.evil/config': `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "${command}"\n\thooksPath = .evil/hooks\n`,
    '.git': 'gitdir: .evil\n',
  };
}

/**
 * Every file below `dir`, but a worktree's disk image (`<fan-out>/disks/<forkId>.img`, sparse,
 * gigabytes long): its files are read through the worktree it is mounted at.
 */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (dir.endsWith(`${sep}disks`) && name.endsWith('.img')) return [];
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** Writes the evil git dir with write_file, one file a turn, then reports. */
const throughTools: ScriptedModel = {
  name: 'git-attack-tools',
  respond({ request }) {
    const done = request.messages.flatMap((m) =>
      m.role === 'assistant' && Array.isArray(m.content)
        ? m.content.filter((b) => b.type === 'tool_use' && String(b.id).startsWith('toolu_attack'))
        : [],
    ).length;
    const steps = Object.entries(evilGitDir());
    if (done < steps.length) {
      const [path, content] = steps[done]!;
      return {
        content: [{ type: 'tool_use', id: `toolu_attack_${done}`, name: 'write_file', input: { path, content } }],
      };
    }
    return {
      content: [
        { type: 'text', text: 'Scope: a.ts\nResult: done\nKey files: none\nFiles changed: a.ts\nIssues: none' },
      ],
    };
  },
};

let runDir = '';
/** Writes the evil git dir straight into every worktree of the run (no tool), then reports. */
const direct: ScriptedModel = {
  name: 'git-attack-direct',
  respond() {
    for (const fanout of readdirSync(runDir)) {
      const trees = join(runDir, fanout, 'worktrees');
      if (!existsSync(trees)) continue;
      for (const fork of readdirSync(trees))
        for (const [path, content] of Object.entries(evilGitDir())) {
          mkdirSync(join(trees, fork, path, '..'), { recursive: true });
          writeFileSync(join(trees, fork, path), content, { mode: 0o755 });
        }
    }
    return {
      content: [
        { type: 'text', text: 'Scope: a.ts\nResult: done\nKey files: none\nFiles changed: a.ts\nIssues: none' },
      ],
    };
  },
};

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
const emulators = new Map<string, Emulator>();
beforeAll(async () => {
  for (const script of [throughTools, direct])
    emulators.set(script.name, await startEmulator({ latency: 'off', script }));
});
afterAll(async () => {
  for (const emulator of emulators.values()) await emulator.close();
});
// a tampered worktree is kept for `clean` (and for looking at); its disk, when it has one, is
// unmounted here so the test leaves no mount behind
afterEach(async () => {
  if (runDir === undefined || !existsSync(runDir)) return;
  for (const fanOut of readdirSync(runDir)) {
    const trees = join(runDir, fanOut, 'worktrees');
    for (const fork of existsSync(trees) ? readdirSync(trees) : []) await detachDisk(join(trees, fork));
  }
});

async function attack(script: string): Promise<{ json: Record<string, any>; code: number | null; out: string }> {
  const repo = repoWith({ 'a.ts': 'export const fetchData = 1;\n' });
  runDir = mkdtempSync(join(tmpdir(), 'fc-runs-'));
  const parent = {
    ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
    tools: TOOL_DECLARATIONS,
  };
  const plan = join(runDir, 'plan.json');
  writeFileSync(
    plan,
    JSON.stringify({
      parent,
      directives: ['rename fetchData to loadData in a.ts'],
      workspace: repo,
      runDir,
      allow: ['read_file', 'write_file'],
      isolation: 'worktree',
    }),
  );
  const env = { ANTHROPIC_API_KEY: CANARY, ANTHROPIC_BASE_URL: emulators.get(script)!.url };
  const result = await forkcache(['run', plan, '--json'], env);
  for (const text of [result.stdout, result.stderr]) expect(text).not.toContain(CANARY);
  for (const file of filesUnder(runDir)) expect(readFileSync(file, 'utf8'), file).not.toContain(CANARY);
  expect(git(repo, 'status', '--porcelain')).toBe('');
  return { json: lastJson(result.stdout), code: result.code, out: result.stdout + result.stderr };
}

describe("host-side git never runs a fork's git config (issue 24, route 1)", () => {
  it('a fork that writes a git dir and a .git file with its tools: nothing runs, no key leaks', async () => {
    const { json, code } = await attack('git-attack-tools');
    expect(existsSync(pwn)).toBe(false);
    const fork = json['fork_results'][0];
    // the tools may refuse the .git write (the jail); if they do not, the runner refuses the worktree
    if (fork.status === 'failed') expect(fork.error.code).toBe('GIT_WORKTREE_TAMPERED');
    expect(code).not.toBe(0);
  });

  it('the same files written directly into the worktree: the fork ends failed, its changes not committed', async () => {
    const { json, code } = await attack('git-attack-direct');
    expect(existsSync(pwn)).toBe(false);
    const fork = json['fork_results'][0];
    expect(fork.status).toBe('failed');
    expect(fork.error.code).toBe('GIT_WORKTREE_TAMPERED');
    expect(fork.error.message).toMatch(/\.git points at .*\.evil.*forkcache runs no git there/);
    expect(code).toBe(1);
  });
});
