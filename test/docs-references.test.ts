import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// What the prose names must exist: every backticked repository path (`src/core/tools/jail/jail.ts`,
// `test/cli/`), and every test a table cites as `file.test.ts` › its name. Links are checked
// by docs-links.test.ts; these are the references that are not links, and they drifted
// (RELIABILITY.md rows citing tests that had moved).
const ROOT = resolve(import.meta.dirname, '..');

/** Top folders whose paths the docs name; a backticked span starting with one is a path. */
const TOP = ['src', 'test', 'docs', 'bench', 'scripts', 'examples', 'workers', 'bin', '.ci'];

export function documentFiles(root = ROOT): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  return [
    ...['README.md', 'CONTRIBUTING.md', 'RELIABILITY.md'].map((f) => join(root, f)).filter((f) => existsSync(f)),
    ...walk(join(root, 'docs')),
  ];
}

/**
 * The repository paths a Markdown text names in backticks: spans that start with a top folder
 * and hold nothing but a path (no spaces, globs, placeholders or options), a trailing `:LINE`
 * or `/` allowed. `src/**` or `test/RUN/x` are patterns, not paths, and are skipped.
 */
export function pathsNamed(text: string): { path: string; line: number }[] {
  const found: { path: string; line: number }[] = [];
  text.split('\n').forEach((lineText, i) => {
    for (const m of lineText.matchAll(/`([^`\s]+)`/g)) {
      let span = m[1]!.replace(/:\d+(-\d+)?$/, '');
      if (!TOP.some((top) => span.startsWith(`${top}/`))) continue;
      if (/[*?{}<>$[\]|=]|\.\.\.|…|[A-Z]{3,}(\/|$)/.test(span)) continue;
      span = span.replace(/\/$/, '');
      found.push({ path: span, line: i + 1 });
    }
  });
  return found;
}

/**
 * The tests a text cites as `` `path.test.ts` › name `` (RELIABILITY.md's last column): the
 * file, and the fragments of the name between the `…` that shorten it (each at least 8
 * characters), which must stand in that file.
 */
export function testsCited(text: string): { file: string; fragments: string[]; line: number }[] {
  const cited: { file: string; fragments: string[]; line: number }[] = [];
  text.split('\n').forEach((lineText, i) => {
    for (const m of lineText.matchAll(/`([^`\s]+\.test\.ts)`\s*›\s*([^`|›]*)/g)) {
      // asides in parentheses (closed, or cut by the next backtick) are not the test's name
      const name = m[2]!.replace(/\([^)]*(\)|$)/g, '').replace(/[;,]\s*$/, '');
      const fragments = name
        .split(/…|\.\.\./)
        .map((f) =>
          f
            .trim()
            .replace(/^[,;]\s*/, '')
            .replace(/[,;:]$/, '')
            .trim(),
        )
        .filter((f) => f.length >= 8);
      cited.push({ file: m[1]!, fragments, line: i + 1 });
    }
  });
  return cited;
}

/** What is wrong with the references of one document's `text`, as `NAME:LINE: …` lines. */
export function referenceProblems(text: string, name: string, root = ROOT): string[] {
  const problems = pathsNamed(text)
    .filter(({ path }) => !existsSync(join(root, path)))
    .map(({ path, line }) => `${name}:${line}: \`${path}\` does not exist`);
  for (const { file, fragments, line } of testsCited(text)) {
    const path = file.includes('/') ? join(root, file) : testFileNamed(file, root);
    if (path === undefined || !existsSync(path)) {
      problems.push(`${name}:${line}: \`${file}\` does not exist`);
      continue;
    }
    const source = normalise(readFileSync(path, 'utf8'));
    // a fragment may list several tests of the file: `caps a fork bomb, caps a large file`
    const stands = (fragment: string): boolean =>
      source.includes(normalise(fragment)) ||
      fragment.split(/,\s+/).every((part) => part.length < 8 || source.includes(normalise(part)));
    for (const fragment of fragments)
      if (!stands(fragment)) problems.push(`${name}:${line}: no test in \`${file}\` is named with "${fragment}"`);
  }
  return problems;
}

/**
 * A test cited by its file name alone (a row whose folder is named earlier in the text): the
 * one file of that name under test/, or undefined when there is none or more than one.
 */
function testFileNamed(name: string, root: string): string | undefined {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name === name ? [join(dir, e.name)] : [],
    );
  const found = walk(join(root, 'test'));
  return found.length === 1 ? found[0] : undefined;
}

/** Quotes, escapes and markup that differ between a table cell and a test's string literal. */
function normalise(text: string): string {
  return text.replace(/\\(.)/g, '$1').replace(/[`'"]/g, '').replace(/\s+/g, ' ');
}

describe('references in the docs', () => {
  it('every backticked path and every cited test in README, CONTRIBUTING, RELIABILITY and docs/ exists', () => {
    const problems = documentFiles().flatMap((file) =>
      referenceProblems(readFileSync(file, 'utf8'), relative(ROOT, file)),
    );
    expect(problems).toEqual([]);
  });

  it('every repository path docs/architecture.md names, in its diagrams too, exists', () => {
    const text = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const named = [...text.matchAll(/(?<![\w./-])((?:src|test|workers)\/[\w./-]*[\w/])/g)].map((m) =>
      m[1]!.replace(/\/$/, ''),
    );
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('the checker fails on a planted stale path and a test name that is not there', () => {
    const text = [
      'See `src/core/tools/jail/jail.ts` and `src/tools/no-such-file.ts`, `test/cli/` and `src/**/*.ts` (a pattern).',
      '| row | `test/docs-links.test.ts` › every relative link in README.md… | `test/docs-links.test.ts` › a test nobody wrote… |',
    ].join('\n');
    expect(pathsNamed(text).map((p) => p.path)).toEqual([
      'src/core/tools/jail/jail.ts',
      'src/tools/no-such-file.ts',
      'test/cli',
      'test/docs-links.test.ts',
      'test/docs-links.test.ts',
    ]);
    expect(testsCited(text).map((t) => t.fragments)).toEqual([
      ['every relative link in README.md'],
      ['a test nobody wrote'],
    ]);
    const problems = referenceProblems(text, 'planted.md');
    expect(problems).toEqual([
      'planted.md:1: `src/tools/no-such-file.ts` does not exist',
      'planted.md:2: no test in `test/docs-links.test.ts` is named with "a test nobody wrote"',
    ]);
  });
});
