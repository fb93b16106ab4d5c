import { describe, expect, it } from 'vitest';
import { distinctParts } from '../../src/cli/commands/status.ts';

// `forkcache status` cut the directive at 60 characters, before the file name: the only part
// that tells forks of one rename apart. A long common opening is now shown once, the rows keep the rest.
describe('the directive column of status', () => {
  it('keeps the part that differs when the directives share a long opening', () => {
    const long = 'rename fetchDataFromTheRemoteService to loadDataFromTheRemoteService in ';
    const got = distinctParts([`${long}src/features/a.ts`, `${long}src/features/b.ts`]);
    expect(got).toEqual({
      common: `${long}src/features/`.slice(0, long.length),
      parts: ['src/features/a.ts', 'src/features/b.ts'],
    });
  });

  it('leaves short openings and single forks alone; two directives on one file differ where they differ', () => {
    expect(distinctParts(['rename a to b in x.ts', 'rename c to d in x.ts'])).toEqual({
      common: '',
      parts: ['rename a to b in x.ts', 'rename c to d in x.ts'],
    });
    expect(distinctParts(['only one'])).toEqual({ common: '', parts: ['only one'] });
  });
});
