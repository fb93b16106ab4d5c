import { describe, expect, it } from 'vitest';
import { planSchema } from '../../src/cli/plan/plan.ts';
import { planSettings, withDeclaredNames } from '../../src/cli/plan/plan-settings.ts';
import { resolveEngineOptions } from '../../src/core/engine/options.ts';
import { ENGINE_SETTINGS } from '../../src/core/settings/engine-settings.ts';

const minimal = { directives: ['a'] };

describe("a plan's fields of the declared engine settings", () => {
  it('are plan fields at their declared path, with the setting’s schema and default', () => {
    for (const s of Object.values(ENGINE_SETTINGS) as { plan?: string }[]) {
      if (!s.plan) continue;
      const [group, key] = s.plan.includes('.') ? s.plan.split('.') : [undefined, s.plan];
      const shape = group ? (planSchema.shape.limits.unwrap().shape as object) : planSchema.shape;
      expect(shape, s.plan).toHaveProperty(key!);
    }
    const plan = planSchema.parse(minimal);
    expect(plan).toMatchObject({ warm: 'first-child', isolation: 'none', sandbox: 'auto', sparseWorktrees: false });
    expect(planSchema.safeParse({ ...minimal, limits: { maxTurns: 0 } }).success).toBe(false);
    expect(planSchema.safeParse({ ...minimal, sandbox: 'docker' }).success).toBe(false);
  });

  it('are read into the engine options by their declared names', () => {
    const plan = planSchema.parse({ ...minimal, limits: { maxTurns: 9 }, isolation: 'worktree', maxUsd: 2 });
    const options = planSettings(plan);
    expect(options).toMatchObject({ maxTurns: 9, isolation: 'worktree', maxUsd: 2, warm: 'first-child' });
    expect(
      resolveEngineOptions({ baseURL: 'http://127.0.0.1:1', apiKey: 'k', ...options, runsDir: '/tmp/r' }),
    ).toMatchObject({
      maxTurns: 9,
      isolation: 'worktree',
    });
  });

  it('a plan written with an older name (`sparse`) still reads, as its declared one', () => {
    const old = withDeclaredNames(planSchema.parse({ ...minimal, isolation: 'worktree', sparse: true }));
    expect(old.sparseWorktrees).toBe(true);
    expect(old).not.toHaveProperty('sparse');
    expect(planSettings(planSchema.parse({ ...minimal, sparse: true }))).toMatchObject({ sparseWorktrees: true });
    const now = withDeclaredNames(planSchema.parse({ ...minimal, isolation: 'worktree', sparseWorktrees: true }));
    expect(now.sparseWorktrees).toBe(true);
    expect(withDeclaredNames(planSchema.parse(minimal)).sparseWorktrees).toBe(false);
  });
});
