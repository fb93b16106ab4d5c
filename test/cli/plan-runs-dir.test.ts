import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlan } from '../../src/cli/plan/plan.ts';

const example = new URL('../../examples/plan/', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'fc-plan-runs-dir-'));
copyFileSync(new URL('parent.json', example), join(dir, 'parent.json'));
const base = JSON.parse(readFileSync(new URL('plan.json', example), 'utf8')) as Record<string, unknown>;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function planWith(fields: Record<string, unknown>): string {
  const { runsDir: _runsDir, ...rest } = base;
  const path = join(dir, `plan-${Object.keys(fields).join('-') || 'none'}.json`);
  writeFileSync(path, JSON.stringify({ ...rest, workspace: '.', ...fields }));
  return path;
}

describe('a plan names its runs directory', () => {
  it('as runsDir, resolved against the plan', () => {
    expect(loadPlan(planWith({ runsDir: 'runs' })).runsDir).toBe(join(dir, 'runs'));
  });

  it('by default .forkcache/runs', () => {
    expect(loadPlan(planWith({})).runsDir).toBe(join(dir, '.forkcache', 'runs'));
  });

  it('as runDir, the deprecated name, for one release', () => {
    expect(loadPlan(planWith({ runDir: 'old' })).runsDir).toBe(join(dir, 'old'));
  });

  it('refuses runDir and runsDir naming different folders, naming the field', () => {
    expect(loadPlan(planWith({ runDir: 'runs', runsDir: './runs' })).runsDir).toBe(join(dir, 'runs'));
    expect(() => loadPlan(planWith({ runDir: 'old', runsDir: 'new' }))).toThrow(
      /runDir \(the deprecated name of runsDir\) and runsDir name different folders/,
    );
  });
});
