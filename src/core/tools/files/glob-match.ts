import { RE2JS } from 're2js';
import { toolFailure } from '../result.ts';

/*
 * A small glob matcher, written here rather than taken from a dependency: it needs only
 * `**`, `*`, `?`, `{a,b}` and `[...]` over `/`-separated relative paths, and the walk that
 * feeds it has to be our own anyway (it must never follow symlinks out of the workspace).
 * Wildcards match dotfiles too: a fork looking for `*.json` means `.eslintrc.json` as well.
 *
 * Its work is bounded on any input, because it runs synchronously on the fork's thread where
 * no deadline can stop it: the parser looks at each brace once (a brace that turns out
 * literal, `{a}`, is remembered, so `{{{…{a}…}}}` is not re-parsed at every level: that was
 * exponential), patterns past a length or nesting limit are refused, and the compiled
 * expression runs on RE2 (re2js), linear in the path's length: `{*,*}{*,*}…x` or `*a*a*a*b`
 * would backtrack exponentially or polynomially in JavaScript's RegExp.
 */

/** The longest glob taken (characters): paths are far shorter; a longer pattern is refused. */
const MAX_GLOB_CHARS = 4096;
/** The deepest nesting of braces taken. */
const MAX_BRACE_DEPTH = 32;

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/;
const GLOB_SPECIAL = /[*?[{\\]/;
const SLASH = 0x2f;

function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}

/** A code point inside a character class, written so RE2 reads it literally. */
const classChar = (code: number): string => `\\x{${code.toString(16)}}`;

/** A compiled glob: whether a `/`-separated relative path (or a name) matches it whole. */
export interface GlobMatcher {
  test(path: string): boolean;
}

class GlobParser {
  #i = 0;
  #depth = 0;
  readonly #p: string;
  /** Braces already parsed, by position and segment start: their source and end, or null when literal. */
  readonly #braceMemo = new Map<string, { source: string; end: number } | null>();

  constructor(pattern: string) {
    this.#p = pattern;
  }

  parse(): string {
    const source = this.#seq(false, true);
    if (this.#i !== this.#p.length) throw new SyntaxError(`unexpected ${this.#p[this.#i]}`);
    return source;
  }

  /** A sequence, up to the end or (inside braces) an unconsumed `,` or `}`. */
  #seq(inBrace: boolean, startsSegment: boolean): string {
    const p = this.#p;
    const begin = this.#i;
    let out = '';
    while (this.#i < p.length) {
      const c = p[this.#i] as string;
      if (inBrace && (c === ',' || c === '}')) break;
      const atSegmentStart = this.#i === begin ? startsSegment : p[this.#i - 1] === '/';
      if (c === '\\') {
        const next = p[this.#i + 1];
        out += escapeChar(next ?? '\\');
        this.#i += next === undefined ? 1 : 2;
      } else if (c === '*') {
        let j = this.#i;
        while (p[j] === '*') j += 1;
        const after = p[j];
        const globstar = j - this.#i >= 2 && atSegmentStart;
        if (globstar && after === '/') {
          out += '(?:[^/]*/)*'; // zero or more whole segments
          j += 1;
        } else if (globstar && (after === undefined || (inBrace && (after === ',' || after === '}')))) {
          out += '[\\s\\S]*'; // everything below
        } else {
          out += '[^/]*';
        }
        this.#i = j;
      } else if (c === '?') {
        out += '[^/]';
        this.#i += 1;
      } else if (c === '[' || c === '{') {
        // Either construct consumes itself, or leaves `#i` in place when it is a literal.
        const group = c === '[' ? this.#charClass() : this.#braces(atSegmentStart);
        if (group === undefined) {
          out += escapeChar(c);
          this.#i += 1;
        } else {
          out += group;
        }
      } else {
        out += escapeChar(c);
        this.#i += 1;
      }
    }
    return out;
  }

  /** `{a,b,...}` as an alternation, or undefined (and no progress) when it is not one. */
  #braces(startsSegment: boolean): string | undefined {
    const begin = this.#i;
    const key = `${begin}:${startsSegment ? 1 : 0}`;
    const known = this.#braceMemo.get(key);
    if (known !== undefined) {
      if (known !== null) this.#i = known.end;
      return known?.source;
    }
    if (this.#depth >= MAX_BRACE_DEPTH) throw new SyntaxError(`braces nested deeper than ${MAX_BRACE_DEPTH}`);
    this.#depth += 1;
    try {
      const source = this.#alternatives(begin, startsSegment);
      this.#braceMemo.set(key, source === undefined ? null : { source, end: this.#i });
      return source;
    } finally {
      this.#depth -= 1;
    }
  }

  #alternatives(begin: number, startsSegment: boolean): string | undefined {
    this.#i += 1;
    const alternatives: string[] = [];
    for (;;) {
      alternatives.push(this.#seq(true, startsSegment));
      const stop = this.#p[this.#i];
      this.#i += 1;
      if (stop === '}') break;
      if (stop !== ',') {
        this.#i = begin; // unclosed: a literal `{`
        return undefined;
      }
    }
    if (alternatives.length < 2) {
      this.#i = begin; // `{a}` is literal, as in bash
      return undefined;
    }
    return `(?:${alternatives.join('|')})`;
  }

  /**
   * `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` (never matching `/`), or undefined when unclosed.
   * Each character is written as a code point and a range holding `/` is split around it:
   * RE2 has no lookahead to exclude it with.
   */
  #charClass(): string | undefined {
    const p = this.#p;
    let j = this.#i + 1;
    const negate = p[j] === '!' || p[j] === '^';
    if (negate) j += 1;
    const ranges: [number, number][] = [];
    let first = true;
    const charAt = (at: number): [number, number] => {
      const code = p.codePointAt(at) as number;
      return [code, code > 0xffff ? 2 : 1];
    };
    while (j < p.length) {
      if (p[j] === ']' && !first) {
        this.#i = j + 1;
        const body = ranges.map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`));
        if (negate) return `[^/${body.join('')}]`;
        const kept = ranges.flatMap(([lo, hi]): [number, number][] =>
          lo <= SLASH && SLASH <= hi
            ? (
                [
                  [lo, SLASH - 1],
                  [SLASH + 1, hi],
                ] as [number, number][]
              ).filter(([a, b]) => a <= b)
            : [[lo, hi]],
        );
        if (kept.length === 0) return '[^\\x{0}-\\x{10ffff}]'; // `[/]`: matches nothing
        return `[${kept.map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`)).join('')}]`;
      }
      if (p[j] === '\\' && j + 1 < p.length) j += 1;
      const [lo, width] = charAt(j);
      j += width;
      first = false;
      if (p[j] === '-' && j + 1 < p.length && p[j + 1] !== ']') {
        let k = j + 1;
        if (p[k] === '\\' && k + 1 < p.length) k += 1;
        const [hi, hiWidth] = charAt(k);
        if (hi < lo) throw new SyntaxError(`range out of order in character class`);
        ranges.push([lo, hi]);
        j = k + hiWidth;
      } else {
        ranges.push([lo, lo]);
      }
    }
    return undefined;
  }
}

/** Compile a glob to a matcher of whole `/`-separated relative paths (RE2: linear in the path). */
export function compileGlob(pattern: string): GlobMatcher {
  try {
    if (pattern.length > MAX_GLOB_CHARS) throw new SyntaxError(`longer than ${MAX_GLOB_CHARS} characters`);
    const re = RE2JS.compile(`^(?:${new GlobParser(pattern).parse()})$`);
    return { test: (path) => re.matcher(path).matches() };
  } catch (err) {
    const shown = pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern;
    throw toolFailure('TOOL_BAD_PATTERN', `invalid glob ${shown}: ${(err as Error).message}`);
  }
}

/**
 * Check a glob the model gave and split off its literal leading directories, so the walk can
 * start there instead of at the root. Patterns are relative to the workspace: a leading `/`
 * or a `..` segment is refused rather than reinterpreted.
 */
export function parseGlob(pattern: string): { readonly base: string; readonly matcher: GlobMatcher } {
  if (pattern.includes('\0')) throw toolFailure('TOOL_INPUT_INVALID', 'the pattern contains a NUL byte');
  if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
    throw toolFailure(
      'TOOL_PATH_ESCAPE',
      `glob ${pattern} leaves the workspace; patterns are relative to the workspace root`,
    );
  }
  // Paths are matched without `.` segments (`./src/*.ts` means `src/*.ts`).
  const segments = pattern.split('/').filter((s) => s !== '.');
  const clean = segments.join('/');
  const literal: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (GLOB_SPECIAL.test(segment)) break;
    literal.push(segment);
  }
  return { base: literal.filter((s) => s !== '').join('/'), matcher: compileGlob(clean) };
}
