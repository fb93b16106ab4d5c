import { describe, expect, it } from 'vitest';
import { bisect, implicatedForks, outputFor } from '../../src/cli/integrate/attribute.ts';
import type { ForkReview } from '../../src/cli/review/run-forks.ts';

const fork = (short: string, files: string[]): ForkReview =>
  ({ forkId: `fo001-x-${short}`, short, filesChanged: files }) as unknown as ForkReview;

describe('which forks a failed integration check points at', () => {
  it('maps the paths of Go, tsc and Python output to the forks that changed them, and no longer names', () => {
    const forks = [
      fork('f01', ['cmd.go']),
      fork('f02', ['src/a.ts']),
      fork('f03', ['pkg/x.py']),
      fork('f04', ['a.go']),
    ];
    const output = [
      './cmd.go:7:9: undefined: exec.RunCommand',
      'src/a.ts(3,5): error TS2304: Cannot find name',
      '  File "/tmp/w/pkg/x.py", line 3',
      'data.go:1:1: something else',
    ].join('\n');
    expect(implicatedForks(output, forks).map((i) => [i.fork.short, i.files])).toEqual([
      ['f01', ['cmd.go']],
      ['f02', ['src/a.ts']],
      ['f03', ['pkg/x.py']],
    ]);
    expect(outputFor(output, ['cmd.go'])).toBe('./cmd.go:7:9: undefined: exec.RunCommand');
  });

  it('bisects over the forks in plan order: the first prefix that fails ends with the culprit; a red base finds none', async () => {
    const forks = ['f01', 'f02', 'f03', 'f04', 'f05', 'f06', 'f07', 'f08'];
    const tried: number[] = [];
    const culprit = await bisect(forks, async (n) => {
      tried.push(n);
      return n >= 6; // f06 breaks it
    });
    expect(culprit).toBe('f06');
    expect(tried.length).toBeLessThanOrEqual(3);
    expect(await bisect(forks, async () => true)).toBeUndefined();
    expect(await bisect(forks, async (n) => n >= 1)).toBe('f01');
    // a base the caller already saw pass is not checked again
    const again: number[] = [];
    expect(await bisect(forks, async (n) => (again.push(n), n >= 1), true)).toBe('f01');
    expect(again).not.toContain(0);
  });
});
