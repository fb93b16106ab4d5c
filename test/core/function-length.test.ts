import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// A function longer than a screenful hides its story: src/core's long ones are split into
// named steps (issue 46), and this keeps them so. Lines run from the function's first line to
// its last, comments and blank lines included.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CORE = join(ROOT, 'src/core');
const MAX_LINES = 100;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.m?ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** A function's name as a reader finds it: its own, or the variable or property it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText();
  return '<anonymous>';
}

/** Every function, method, constructor, accessor and arrow with a body over `max` lines: `file:line name (n lines)`. */
function longFunctions(file: string, text: string, max = MAX_LINES): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const fn = node as ts.FunctionLikeDeclaration;
      const start = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      const lines = end - start + 1;
      if (lines > max) found.push(`${file}:${start + 1} ${nameOf(fn)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length', () => {
  it(`finds a function over the limit, an arrow or method in it too, and not one at the limit`, () => {
    const body = (n: number): string => Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `export function atLimit() {\n${body(MAX_LINES)}\n}`,
      `export function over() {\n${body(MAX_LINES + 1)}\n}`,
      `const arrow = () => {\n${body(MAX_LINES + 1)}\n};`,
      `class C {\n  method() {\n${body(MAX_LINES + 1)}\n  }\n}`,
    ].join('\n');
    const found = longFunctions('x.ts', text).map((f) => f.replace(/^x\.ts:\d+ /, ''));
    expect(found).toEqual([`over (101 lines)`, `arrow (101 lines)`, `method (101 lines)`]);
  });

  it(`keeps every function in src/core at ${MAX_LINES} lines or fewer`, () => {
    const long = sources(CORE).flatMap((file) =>
      longFunctions(relative(ROOT, file).replaceAll('\\', '/'), readFileSync(file, 'utf8')),
    );
    expect(long).toEqual([]);
  });
});
