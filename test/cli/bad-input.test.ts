import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';
import { forkcache } from './run-cli.ts';

// Issue 15, case 8 (CLI): each of these was a silent substitution, a late failure (exit 1) or
// a raw error; each is now refused up front (exit 2) naming the file or field, or printed.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const parent = () => ({
  ...(JSON.parse(readFileSync(join(ROOT, 'examples/plan/parent.json'), 'utf8')) as Record<string, unknown>),
  tools: TOOL_DECLARATIONS,
});

function planIn(plan: Record<string, unknown> | string): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fc-bad-'));
  const path = join(dir, 'plan.json');
  writeFileSync(
    path,
    typeof plan === 'string'
      ? plan
      : JSON.stringify({
          parent: parent(),
          directives: ['read a.ts and report'],
          emulator: { script: 'refactor', latency: 'off' },
          ...plan,
        }),
  );
  return { dir, path };
}

describe('bad input to the CLI (issue 15, case 8)', () => {
  it('refuses invalid UTF-8 in a plan, naming the file and byte', async () => {
    const { path } = planIn('{}');
    writeFileSync(
      path,
      Buffer.concat([Buffer.from('{"directives":["caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"]}')]),
    );
    const run = await forkcache(['run', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`plan ${path}: not valid UTF-8 (at byte 20)`);
  });

  it('refuses a lone surrogate in the parent, naming the field', async () => {
    const { path } = planIn('{}');
    const text = JSON.stringify({
      parent: { ...parent(), system: 'ok' },
      directives: ['read a.ts and report'],
    }).replace('"system":"ok"', '"system":"bad \\ud800 text"');
    writeFileSync(path, text);
    const run = await forkcache(['run', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('parent.system: contains a lone UTF-16 surrogate');
  });

  it('refuses a 5,000-deep tool schema with exit 2, not a stack overflow', async () => {
    const { path } = planIn('{}');
    const schema = `${'{"type":"object","properties":{"a":'.repeat(5000)}{"type":"string"}${'}}'.repeat(5000)}`;
    writeFileSync(
      path,
      `{"parent":{"model":"claude-sonnet-4-6","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":${schema}}]},"directives":["read a.ts and report"]}`,
    );
    const run = await forkcache(['run', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/parent\.tools\[0\]\.input_schema\.properties\.a.*: nested deeper than 256 levels/);
    expect(run.stderr).not.toMatch(/Maximum call stack/);
  });

  it('refuses a missing workspace up front (exit 2), not fork by fork', async () => {
    const { dir, path } = planIn({ workspace: 'nope' });
    const run = await forkcache(['run', path, '--json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`forkcache: workspace: ${join(dir, 'nope')} does not exist`);
  });

  it('refuses a runsDir or a resume RUN_DIR that is a file (exit 2, no raw ENOTDIR)', async () => {
    const { dir, path } = planIn({ runDir: 'runs' });
    writeFileSync(join(dir, 'runs'), 'a file');
    const run = await forkcache(['run', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`runsDir: ${join(dir, 'runs')} is a file, not a directory`);
    const resume = await forkcache(['resume', join(dir, 'runs')]);
    expect(resume.code).toBe(2);
    expect(resume.stderr).toContain(`${join(dir, 'runs')} is a file`);
    expect(`${run.stderr}${resume.stderr}`).not.toMatch(/ENOTDIR/);
  });

  it("prints a failed fork's reason (a 401) without --json", async () => {
    const refusing = await startEmulator({ latency: 'off', apiKey: 'the-right-key' });
    try {
      const { dir, path } = planIn({});
      writeFileSync(join(dir, 'a.ts'), 'x\n');
      const run = await forkcache(['run', path], {
        ANTHROPIC_API_KEY: 'a-wrong-key-123',
        ANTHROPIC_BASE_URL: refusing.url,
      });
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/failed {2}fo[\w-]+: FORK_API_ERROR: 401/);
    } finally {
      await refusing.close();
    }
  });
});
