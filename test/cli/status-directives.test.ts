import { describe, expect, it } from 'vitest';
import { BoardState, directiveParts } from '../../src/cli/board/board-state.ts';
import { directiveCell, distinctParts } from '../../src/cli/commands/status.ts';

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

// Two directives on one file (two renames meeting in it) looked alike on the board (both rows
// showed the file) and in `status` (both cut at 60 characters, before the file and the new name).
describe('two directives on one file', () => {
  const first = 'rename isFunctionThatChecksTheValue to isCheckedFunction in src/lexers/python_lexer_module.py';
  const second = 'rename TokenTypeForTheLexerOutput to LexerToken in src/lexers/python_lexer_module.py';
  const other = 'rename isFunctionThatChecksTheValue to isCheckedFunction in src/lexers/other.py';

  it('label their board rows with the file and the words they do not share', () => {
    const state = new BoardState('claude-sonnet-4-6');
    state.plan([
      { forkId: 'f1', directive: first },
      { forkId: 'f2', directive: second },
      { forkId: 'f3', directive: other },
    ]);
    const labels = [...state.rows.values()].map((r) => r.label);
    expect(labels).toEqual([
      'src/lexers/python_lexer_module.py (isFunctionThatChecksTheValue to isCheck…)',
      'src/lexers/python_lexer_module.py (TokenTypeForTheLexerOutput to LexerToken)',
      'src/lexers/other.py',
    ]);
    expect(new Set(labels).size).toBe(3);
  });

  it('keep the file and the part that differs in the status column', () => {
    const labels = directiveParts([first, second, other]);
    const cells = [first, second, other].map((d, i) => directiveCell(d, labels[i]!));
    expect(new Set(cells).size).toBe(3);
    expect(cells[1]).toContain('TokenTypeForTheLexerOutput');
    expect(cells[1]).toContain('lexer_module.py');
    expect(cells[2]).toContain('src/lexers/other.py');
    expect(cells.every((c) => c.length <= 60)).toBe(true);
    // a directive that fits is shown whole
    expect(directiveCell('rename a to b in x.ts', { file: 'x.ts', differs: undefined })).toBe('rename a to b in x.ts');
  });
});
