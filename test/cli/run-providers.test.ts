import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson, allCompleted } from './run-cli.ts';

/** The example plan in a temp directory, with its run directory there too, and a `provider` field. */
function planWithProvider(provider: string): { path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fc-plan-'));
  cpSync('examples/plan/parent.json', join(dir, 'parent.json'));
  const plan = JSON.parse(readFileSync('examples/plan/plan.json', 'utf8')) as Record<string, unknown>;
  const path = join(dir, 'plan.json');
  writeFileSync(
    path,
    JSON.stringify({ ...plan, workspace: join(process.cwd(), 'examples', 'sample-repo'), runsDir: 'runs', provider }),
  );
  return { path, dir };
}

const NO_KEYS = {
  OPENAI_API_KEY: undefined,
  DASHSCOPE_API_KEY: undefined,
  DEEPSEEK_API_KEY: undefined,
  OPENAI_BASE_URL: undefined,
  DASHSCOPE_BASE_URL: undefined,
};

describe('one plan, any provider', () => {
  it('the plan says dashscope; --provider openai runs the same plan on the other wire; the manifest records it', async () => {
    const { path, dir } = planWithProvider('dashscope');
    const ds = await forkcache(['run', path, '--json'], NO_KEYS);
    expect(ds.stderr).toMatch(/embedded emulator .*dashscope mode/);
    expect(ds.code).toBe(0);
    const oa = await forkcache(['run', path, '--provider', 'openai', '--json'], NO_KEYS);
    expect(oa.stderr).toMatch(/embedded emulator .*openai mode/);
    expect(oa.code).toBe(0);
    const [a, b] = [lastJson(ds.stdout), lastJson(oa.stdout)];
    for (const summary of [a, b]) {
      expect(summary.forks).toEqual(allCompleted(3));
      expect(summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
    }
    // two wires, two frozen heads of one snapshot
    expect(a.prefix.sha256).not.toBe(b.prefix.sha256);
    const providers = readdirSync(join(dir, 'runs'))
      .map((id) => JSON.parse(readFileSync(join(dir, 'runs', id, 'manifest.json'), 'utf8')).prefix.provider)
      .sort();
    expect(providers).toEqual(['dashscope', 'openai']);
  });

  it("resume refuses a provider other than the one the run was frozen for, naming it, and takes the run's own by default", async () => {
    const { path, dir } = planWithProvider('dashscope');
    expect((await forkcache(['run', path, '--json'], NO_KEYS)).code).toBe(0);
    const run = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
    const wrong = await forkcache(['resume', run, '--provider', 'openai'], NO_KEYS);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/provider: the run was frozen for dashscope, this engine speaks openai/);
    // without the flag, resume takes the run's own provider (nothing left to do: every fork completed)
    const again = await forkcache(['resume', run, '--json'], NO_KEYS);
    expect(again.stderr).toMatch(/embedded emulator .*dashscope mode/);
    expect(again.code).toBe(0);
    expect(lastJson(again.stdout).forks.completed).toBe(3);
  });
});
