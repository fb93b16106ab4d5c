import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { planSchema } from '../../src/cli/plan/plan.ts';
import { planFieldsHelp } from '../../src/cli/plan/help.ts';
import { retryFlag } from '../../src/cli/retry-flag.ts';
import { forkcache } from './run-cli.ts';

describe('run --help lists every plan field with its default', () => {
  it('derives the list from the schema: every field and nested field, defaults included', () => {
    const help = planFieldsHelp(planSchema);
    const names = help.split('\n').map((l) => l.trim().split(/\s+/)[0]);
    for (const [key, field] of Object.entries(planSchema.shape)) {
      expect(names, key).toContain(key === 'limits' ? 'limits.maxTurns' : key);
      const inner = field instanceof z.ZodDefault || field instanceof z.ZodOptional ? field.unwrap() : field;
      if (inner instanceof z.ZodObject)
        for (const sub of Object.keys(inner.shape)) expect(names, `${key}.${sub}`).toContain(`${key}.${sub}`);
    }
    expect(help).toMatch(/checkRetries +integer: .*\(default 1\)/);
    expect(help).toMatch(/emulator\.script +string: .*\(default "refactor"\)/);
    expect(help).toMatch(/limits\.maxTurns +integer: model calls per fork \(default 200\)/);
  });

  it('is printed by forkcache run --help', async () => {
    const { code, stdout } = await forkcache(['run', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Plan fields \(docs\/plans\.md\):\n {2}parent /);
    expect(stdout).toMatch(/\n {2}check +string: a shell command run in each fork's workspace/);
  });
});

describe('resume --retry', () => {
  it('takes retryable statuses or all-not-done, and refuses the others with the reason', () => {
    expect(retryFlag.parse('check_failed')).toEqual(['check_failed']);
    expect(retryFlag.parse('not_done, truncated')).toEqual(['not_done', 'truncated']);
    expect(retryFlag.parse('all-not-done')).toEqual([
      'no_change',
      'not_done',
      'truncated',
      'check_failed',
      'invalid_output',
    ]);
    expect(retryFlag.parse(undefined)).toEqual([]);
    const refused = (value: string): string => retryFlag.safeParse(value).error!.issues[0]!.message;
    expect(refused('completed')).toMatch(/^completed forks never re-run/);
    expect(refused('failed')).toMatch(/^failed forks are continued by every resume/);
    expect(refused('not-done')).toMatch(
      /^unknown status "not-done"; expected no_change, not_done, truncated, check_failed, invalid_output, all-not-done/,
    );
  });
});
