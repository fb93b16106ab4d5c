import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  boundedSegments,
  countInSegments,
  longRuns,
  MAX_PIECE,
  SAMPLED_SLICES,
} from '../../../src/integrations/emulator/tokens/long-runs.ts';
import { claudeTokenizer } from '../../../src/integrations/emulator/tokens/tokenizer.ts';

/*
 * Token estimates in linear time (issue 25): the Claude BPE costs the square of a piece's
 * length, and one 60,000-character word stalled every other client of the proxy or the
 * emulator for 6–8 s. No wall time here: the tests bound what the BPE is ever given (the
 * longest run of one character class in a segment) and the total it is given (the text's
 * length, once), which together bound its work linearly; and they check that ordinary text is
 * counted exactly as before.
 */

const require = createRequire(import.meta.url);
const raw = (
  require('@anthropic-ai/tokenizer') as { getTokenizer(): { encode(t: string, s: 'all'): Uint32Array } }
).getTokenizer();
const exact = (text: string): number => raw.encode(text.normalize('NFKC'), 'all').length;

/** The longest run of one BPE character class (letters, digits, spaces, other) in a string. */
function longestRun(text: string): number {
  let best = 0;
  for (const m of text.matchAll(/\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+/gu)) best = Math.max(best, m[0].length);
  return best;
}

/** Everything the BPE is given for `text`: the segments, recorded. */
function seen(text: string): string[] {
  const given: string[] = [];
  countInSegments(text, (segment) => (given.push(segment), { length: 0 }));
  return given;
}

const seeded = (n: number, alphabet: string, seed = 7): string => {
  let x = seed;
  return Array.from({ length: n }, () => alphabet[(x = (x * 1103515245 + 12345) & 0x7fffffff) % alphabet.length]).join(
    '',
  );
};

describe('token estimates in linear time', () => {
  for (const [name, text] of [
    ['a 60,000-letter word', 'a'.repeat(60_000)],
    ['a 100,000-character model id', `claude-${seeded(100_000, 'abcdefghijklmnopqrstuvwxyz')}`],
    ['100,000 digits', '7'.repeat(100_000)],
    ['100,000 spaces', ' '.repeat(100_000)],
    ['100,000 symbols', '=-'.repeat(50_000)],
    ['50,000 astral letters', '𝒜'.repeat(50_000)],
    ['a CJK paragraph without punctuation', '漢字仮名交じり文'.repeat(10_000)],
  ] as const) {
    it(`${name}: the BPE never sees a run over ${MAX_PIECE} characters, nor more than ${SAMPLED_SLICES} slices of it`, () => {
      const given = seen(text);
      // a surrogate pair is never split, so a slice may hold one code unit more
      expect(Math.max(...given.map(longestRun))).toBeLessThanOrEqual(MAX_PIECE + 1);
      expect(given.join('').length).toBeLessThanOrEqual(SAMPLED_SLICES * (MAX_PIECE + 1) + 8);
    });
  }

  it('the BPE work per character does not grow with the word: 100K characters cost no more per character than 1K', () => {
    // BPE work on a piece is at most its length squared: sum it over what the BPE is given.
    const work = (text: string): number =>
      seen(text).reduce(
        (sum, s) =>
          sum + [...s.matchAll(/\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+/gu)].reduce((a, m) => a + m[0].length ** 2, 0),
        0,
      );
    const perChar = (n: number): number => work(`start ${'b'.repeat(n)} end`) / n;
    expect(perChar(100_000)).toBeLessThanOrEqual(perChar(1_000));
    expect(perChar(1_000)).toBeLessThanOrEqual(MAX_PIECE + 1);
  });

  it('text between long runs is given whole and exactly once; the segments rebuild the text', () => {
    const text = `head words ${'x'.repeat(5_000)} middle words ${'9'.repeat(300)} tail words`;
    const given = seen(text);
    expect(given[0]).toBe('head words ');
    expect(given).toContain(' middle words ');
    expect(given.at(-1)).toBe(' tail words');
    expect([...boundedSegments(text)].join('')).toBe(text);
  });

  it('ordinary text is one segment, counted exactly as the unchanged BPE counts it', () => {
    const fixture = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../fixtures/claude-code/2.1.332/fork-fanout/wire/04.json'), 'utf8'),
    ) as { body: { system: { text: string }[]; tools: unknown[]; messages: unknown[] } };
    const texts = [
      ...fixture.body.system.map((b) => b.text),
      JSON.stringify(fixture.body.tools),
      JSON.stringify(fixture.body.messages),
      readFileSync(join(import.meta.dirname, '../../../CONTRIBUTING.md'), 'utf8'),
      'https://example.com/a/very/long/path?with=query&and=more#fragment 0123456789abcdef0123456789abcdef',
    ];
    for (const text of texts) {
      expect(longRuns(text)).toEqual([]);
      expect([...boundedSegments(text)]).toEqual([text]);
      expect(claudeTokenizer.count(text)).toBe(exact(text));
    }
  });

  it('a long word is estimated within 2% of the exact count', () => {
    // 4,000 characters: 63 slices, so the sampled estimate (16 of them) is what is checked
    for (const text of ['a'.repeat(4_000), seeded(4_000, 'abcdefghijklmnopqrstuvwxyz'), seeded(4_000, '0123456789')]) {
      const estimate = claudeTokenizer.count(text);
      expect(Math.abs(estimate - exact(text)) / exact(text)).toBeLessThan(0.02);
    }
  });

  it('property: segments rebuild the text, and no segment holds a run longer than the bound', () => {
    const run = fc.tuple(fc.constantFrom('a', '7', ' ', '!', 'é', '𝒜', '\n'), fc.integer({ min: 1, max: 300 }));
    fc.assert(
      fc.property(fc.array(run, { maxLength: 12 }), (runs) => {
        const text = runs.map(([c, n]) => c.repeat(n)).join('');
        const given = [...boundedSegments(text)];
        return given.join('') === text && given.every((s) => longestRun(s) <= MAX_PIECE + 1);
      }),
      { numRuns: 300 },
    );
  });
});
