import { describe, expect, it } from 'vitest';
import { compileGlob, parseGlob } from '../../../src/core/tools/files/glob-match.ts';

function matches(pattern: string, paths: string[]): string[] {
  const regex = compileGlob(pattern);
  return paths.filter((p) => regex.test(p));
}

const PATHS = [
  'a.ts',
  'b.js',
  '.eslintrc.json',
  'src/a.ts',
  'src/a.test.ts',
  'src/b.tsx',
  'src/lib/c.ts',
  'src/lib/deep/d.ts',
  'test/a.test.ts',
  'docs/readme.md',
  'x/y',
];

describe('compileGlob', () => {
  it('`*` and `?` stay within one segment', () => {
    expect(matches('*.ts', PATHS)).toEqual(['a.ts']);
    expect(matches('src/*.ts', PATHS)).toEqual(['src/a.ts', 'src/a.test.ts']);
    expect(matches('?.ts', PATHS)).toEqual(['a.ts']);
    expect(matches('src/?.ts*', PATHS)).toEqual(['src/a.ts', 'src/b.tsx']);
    expect(matches('*', PATHS)).toEqual(['a.ts', 'b.js', '.eslintrc.json']);
  });

  it('`**` spans zero or more whole segments', () => {
    expect(matches('**/*.ts', PATHS)).toEqual([
      'a.ts',
      'src/a.ts',
      'src/a.test.ts',
      'src/lib/c.ts',
      'src/lib/deep/d.ts',
      'test/a.test.ts',
    ]);
    expect(matches('src/**/*.ts', PATHS)).toEqual(['src/a.ts', 'src/a.test.ts', 'src/lib/c.ts', 'src/lib/deep/d.ts']);
    expect(matches('src/**/d.ts', PATHS)).toEqual(['src/lib/deep/d.ts']);
    expect(matches('src/**', PATHS)).toEqual([
      'src/a.ts',
      'src/a.test.ts',
      'src/b.tsx',
      'src/lib/c.ts',
      'src/lib/deep/d.ts',
    ]);
    expect(matches('**', PATHS)).toEqual(PATHS);
    expect(matches('**/lib/**/*.ts', PATHS)).toEqual(['src/lib/c.ts', 'src/lib/deep/d.ts']);
  });

  it('`**` inside a segment is a plain `*`', () => {
    expect(matches('src/a**.ts', PATHS)).toEqual(['src/a.ts', 'src/a.test.ts']);
    expect(matches('src**', PATHS)).toEqual([]);
  });

  it('`{a,b}` alternatives, nested and with wildcards', () => {
    expect(matches('src/*.{ts,tsx}', PATHS)).toEqual(['src/a.ts', 'src/a.test.ts', 'src/b.tsx']);
    expect(matches('{src,test}/a.test.ts', PATHS)).toEqual(['src/a.test.ts', 'test/a.test.ts']);
    expect(matches('{docs/*.md,x/{y,z}}', PATHS)).toEqual(['docs/readme.md', 'x/y']);
    expect(matches('{**/c.ts,b.js}', PATHS)).toEqual(['b.js', 'src/lib/c.ts']);
  });

  it('treats unclosed and single-item braces and brackets literally, as bash does', () => {
    expect(compileGlob('{a}.ts').test('{a}.ts')).toBe(true);
    expect(compileGlob('{a}.ts').test('a.ts')).toBe(false);
    expect(compileGlob('{a,b.ts').test('{a,b.ts')).toBe(true);
    expect(compileGlob('[ab.ts').test('[ab.ts')).toBe(true);
  });

  it('character classes, ranges and negation, never matching /', () => {
    expect(matches('[ab].*', PATHS)).toEqual(['a.ts', 'b.js']);
    expect(matches('[!a].*', PATHS)).toEqual(['b.js']);
    expect(matches('[^a].*', PATHS)).toEqual(['b.js']);
    expect(matches('src/[a-b].ts*', PATHS)).toEqual(['src/a.ts', 'src/b.tsx']);
    expect(compileGlob('x[/]y').test('x/y')).toBe(false);
    expect(compileGlob('x[!a]y').test('x/y')).toBe(false);
    expect(compileGlob('[]]').test(']')).toBe(true);
  });

  it('escapes regex metacharacters and honours backslash escapes', () => {
    expect(compileGlob('a+(b)|c$.txt').test('a+(b)|c$.txt')).toBe(true);
    expect(compileGlob('a.txt').test('abtxt')).toBe(false);
    expect(compileGlob('\\*.txt').test('*.txt')).toBe(true);
    expect(compileGlob('\\*.txt').test('a.txt')).toBe(false);
    expect(compileGlob('\\{a,b\\}').test('{a,b}')).toBe(true);
  });

  it('rejects an invalid class range as a bad pattern', () => {
    expect(() => compileGlob('[z-a]')).toThrow(expect.objectContaining({ code: 'TOOL_BAD_PATTERN' }));
  });
});

describe('parseGlob', () => {
  it('splits off literal leading directories as the walk base', () => {
    expect(parseGlob('src/lib/**/*.ts').base).toBe('src/lib');
    expect(parseGlob('src/a.ts').base).toBe('src');
    expect(parseGlob('./src/*.ts').base).toBe('src');
    expect(parseGlob('*.ts').base).toBe('');
    expect(parseGlob('{src,test}/*.ts').base).toBe('');
    expect(parseGlob('./src/*.ts').matcher.test('src/a.ts')).toBe(true);
  });

  it('refuses patterns that leave the workspace', () => {
    for (const pattern of ['/etc/*', '../*', 'src/../../x', '..']) {
      expect(() => parseGlob(pattern), pattern).toThrow(expect.objectContaining({ code: 'TOOL_PATH_ESCAPE' }));
    }
  });
});
