import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveEngineOptions } from '../../src/core/engine/options.ts';
import { MAX_WORKSPACE_MB } from '../../src/core/tools/limits.ts';
import { forkcache } from './run-cli.ts';

// Issue 43: `maxWorkspaceMb` of 1e8 or 1e15 reached the worktree's disk image and failed the
// fork with a raw EFBIG / ERR_OUT_OF_RANGE (exit 1). A size no host can make is bad input: the
// plan and the engine option are refused before anything starts, naming the field (exit 2).

const example = new URL('../../examples/plan/', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'fc-workspace-ceiling-'));
copyFileSync(new URL('parent.json', example), join(dir, 'parent.json'));
const base = JSON.parse(readFileSync(new URL('plan.json', example), 'utf8')) as Record<string, unknown>;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function planWith(maxWorkspaceMb: number): string {
  const path = join(dir, `plan-${maxWorkspaceMb}.json`);
  writeFileSync(
    path,
    JSON.stringify({ ...base, workspace: '.', isolation: 'worktree', limits: { maxWorkspaceMb }, runsDir: 'runs' }),
  );
  return path;
}

describe('maxWorkspaceMb has the host’s ceiling', () => {
  it.each([1e8, 1e15])('a plan asking %d MB exits 2 naming limits.maxWorkspaceMb, nothing run', async (mb) => {
    const result = await forkcache(['run', planWith(mb)]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/limits\.maxWorkspaceMb.*at most 4194304 MB/);
    expect(result.stderr).not.toMatch(/EFBIG|ERR_OUT_OF_RANGE/);
  });

  it('the engine option is refused the same way, and the ceiling itself is accepted', () => {
    const options = (mb: number) => ({ apiKey: 'k', workspace: dir, toolLimits: { maxWorkspaceMb: mb } });
    for (const mb of [1e8, 1e15, MAX_WORKSPACE_MB + 1])
      expect(() => resolveEngineOptions(options(mb))).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(/maxWorkspaceMb/) }),
      );
    expect(resolveEngineOptions(options(MAX_WORKSPACE_MB)).toolLimits.maxWorkspaceMb).toBe(MAX_WORKSPACE_MB);
  });
});
