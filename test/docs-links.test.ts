import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';

// Every relative link in the README and the docs resolves: to a file of the repository, and
// to a heading of it when the link names one (GitHub's anchors). A parser, not a regex, so
// links inside code are not links and titles or parentheses in text do not fool it.
const ROOT = resolve(import.meta.dirname, '..');
const md = new MarkdownIt({ html: false });

function markdownFiles(): string[] {
  const docs = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? docs(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  const top = ['README.md', 'CONTRIBUTING.md', 'RELIABILITY.md'].map((f) => join(ROOT, f)).filter((f) => existsSync(f));
  return [
    ...top,
    ...docs(join(ROOT, 'docs')),
    ...docs(join(ROOT, 'examples')).filter((f) => !f.includes('sample-repo')),
  ];
}

interface Link {
  target: string;
  line: number;
}

function linksOf(text: string): Link[] {
  const links: Link[] = [];
  const walk = (tokens: ReturnType<typeof md.parse>, line: number): void => {
    for (const token of tokens) {
      const at = token.map ? token.map[0] + 1 : line;
      const target =
        token.type === 'link_open' ? token.attrGet('href') : token.type === 'image' ? token.attrGet('src') : null;
      if (target !== null) links.push({ target, line: at });
      if (token.children) walk(token.children, at);
    }
  };
  walk(md.parse(text, {}), 1);
  return links;
}

function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const tokens = md.parse(readFileSync(file, 'utf8'), {});
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[i + 1];
    const text = (inline?.children ?? [])
      .map((c) => (c.type === 'text' || c.type === 'code_inline' ? c.content : ''))
      .join('');
    anchors.add(slugger.slug(text));
  });
  return anchors;
}

/** What is wrong with one link, or null when it resolves. */
function problem(from: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: … are not checked offline
  if (target.startsWith('/')) return 'an absolute path (links must be relative to the file)';
  const [path = '', anchor] = target.split('#', 2);
  const file = path === '' ? from : resolve(dirname(from), decodeURIComponent(path));
  if (!file.startsWith(ROOT + '/')) return 'points outside the repository';
  if (!existsSync(file)) return 'no such file';
  if (anchor === undefined || anchor === '') return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return 'an anchor into a file that has no headings';
  return anchorsOf(file).has(decodeURIComponent(anchor)) ? null : `no heading #${anchor} in ${relative(ROOT, file)}`;
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the README and the docs pages', () => {
    expect(files.map((f) => relative(ROOT, f))).toContain('README.md');
    expect(files.some((f) => f.includes(`${'docs'}/`))).toBe(true);
  });

  it('every relative link in README.md, CONTRIBUTING.md, RELIABILITY.md and docs/ resolves', () => {
    const broken = files.flatMap((file) =>
      linksOf(readFileSync(file, 'utf8')).flatMap(({ target, line }) => {
        const why = problem(file, target);
        return why ? [`${relative(ROOT, file)}:${line}: (${target}): ${why}`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('every docs page named in the text (docs/NAME.md, linked or not) exists', () => {
    const missing = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bdocs\/[\w./-]+\.md\b/g)]
        .map((m) => m[0])
        .filter((path) => !existsSync(join(ROOT, path)))
        .map((path) => `${relative(ROOT, file)}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('the checker itself catches a missing file, a missing heading and an absolute path', () => {
    const readme = join(ROOT, 'README.md');
    expect(problem(readme, 'docs/no-such-page.md')).toBe('no such file');
    expect(problem(readme, '#no-such-heading-anywhere')).toMatch(/no heading/);
    expect(problem(readme, '/etc/passwd')).toMatch(/absolute path/);
    expect(problem(readme, '../outside.md')).toMatch(/outside the repository/);
    expect(problem(readme, 'https://example.com/x')).toBeNull();
    expect(linksOf('`[not](a-link.md)` and\n\n```\n[nor](this.md)\n```\n[but](this.md)')).toEqual([
      { target: 'this.md', line: 6 },
    ]);
  });
});
