import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// docs/library.md lists the events a fan-out yields; the list must be the `FanOutEvent` type's.
// The type is read with the TypeScript compiler (types are gone at run time): the `type`
// literal of every member of the union, as the public entry exports it.
const ROOT = resolve(import.meta.dirname, '..');

function eventTypesOfTheUnion(): string[] {
  const entry = resolve(ROOT, 'src/index.ts');
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).find((s) => s.name === 'FanOutEvent');
  const type = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(symbol!));
  const members = type.isUnion() ? type.types : [type];
  return [
    ...new Set(
      members.flatMap((member) => {
        const prop = member.getProperty('type');
        const t = prop && checker.getTypeOfSymbol(prop);
        if (!t) return [];
        return (t.isUnion() ? t.types : [t])
          .filter((x) => x.isStringLiteral())
          .map((x) => (x as ts.StringLiteralType).value);
      }),
    ),
  ].sort();
}

function eventTypesOfTheDocs(): string[] {
  const page = readFileSync(resolve(ROOT, 'docs/library.md'), 'utf8');
  const section = page.slice(page.indexOf('### Events'), page.indexOf('### Results'));
  return [...section.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]!).sort();
}

describe('the documented fan-out events', () => {
  it('are exactly the members of FanOutEvent', () => {
    const fromType = eventTypesOfTheUnion();
    expect(fromType).toContain('fork-end');
    expect(fromType).toContain('response-start');
    expect(eventTypesOfTheDocs()).toEqual(fromType);
  });
});
