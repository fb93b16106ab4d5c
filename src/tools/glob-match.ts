import { toolFailure } from './result.ts';

/*
 * A small glob matcher, written here rather than taken from a dependency: it needs only
 * `**`, `*`, `?`, `{a,b}` and `[...]` over `/`-separated relative paths, and the walk that
 * feeds it has to be our own anyway (it must never follow symlinks out of the workspace).
 * Wildcards match dotfiles too: a fork looking for `*.json` means `.eslintrc.json` as well.
 */

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/;
const GLOB_SPECIAL = /[*?[{\\]/;

function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}

class GlobParser {
  #i = 0;
  readonly #p: string;

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

  /** `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` (never matching `/`), or undefined when unclosed. */
  #charClass(): string | undefined {
    const p = this.#p;
    let j = this.#i + 1;
    const negate = p[j] === '!' || p[j] === '^';
    if (negate) j += 1;
    let body = '';
    let first = true;
    for (; j < p.length; j += 1) {
      const c = p[j] as string;
      if (c === ']' && !first) {
        this.#i = j + 1;
        return negate ? `[^/${body}]` : `(?:(?!/)[${body}])`;
      }
      if (c === '\\' && j + 1 < p.length) {
        j += 1;
        body += `\\${p[j] as string}`;
      } else if (c === '-' && !first && p[j + 1] !== ']') {
        body += '-';
      } else {
        body += /[\\\]^[-]/.test(c) ? `\\${c}` : c;
      }
      first = false;
    }
    return undefined;
  }
}

/** Compile a glob to an anchored regular expression over `/`-separated relative paths. */
export function globToRegExp(pattern: string): RegExp {
  let source: string;
  try {
    source = new GlobParser(pattern).parse();
    return new RegExp(`^${source}$`);
  } catch (err) {
    throw toolFailure('TOOL_BAD_PATTERN', `invalid glob ${pattern}: ${(err as Error).message}`);
  }
}

/**
 * Check a glob the model gave and split off its literal leading directories, so the walk can
 * start there instead of at the root. Patterns are relative to the workspace: a leading `/`
 * or a `..` segment is refused rather than reinterpreted.
 */
export function parseGlob(pattern: string): { readonly base: string; readonly regex: RegExp } {
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
  return { base: literal.filter((s) => s !== '').join('/'), regex: globToRegExp(clean) };
}
