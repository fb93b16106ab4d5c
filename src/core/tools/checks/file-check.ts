import { createRequire } from 'node:module';
import { dirname, extname, sep } from 'node:path';
import { ForkcacheError, isForkcacheError } from '../../util/errors.ts';
import { importOptional } from '../../util/optional-import.ts';

/*
 * `forkcache check-file`: the default per-fork check of a rename (issue 42). A file-local,
 * language-aware check: the file still parses, and the old name is gone from its identifiers
 * (never from its strings and comments: `! grep -qw Command` pushed a model to turn
 * `exec.Command` into `exec.CobraCommand`, and a Go string holding PowerShell's `$Command` could
 * never pass).
 *
 * The parser is tree-sitter, from `@vscode/tree-sitter-wasm` (an optional peer, loaded on first
 * use): one package, maintained by the VS Code team, holding the web-tree-sitter runtime and the
 * WASM grammars built together by one toolchain, so a grammar always matches its runtime's ABI
 * (pairing `web-tree-sitter` with a separate grammar package such as `tree-sitter-wasms` does not
 * guarantee that); WASM, so no install script and no per-platform binary (`@ast-grep/napi` ships
 * a native binary per platform, and its Go, Python, Rust and Java grammars are further native
 * packages). Without it, the check falls back to the word check plans used before, and says so.
 */

/** The grammars of the package by file extension: the languages people refactor most, and a few more. */
const GRAMMARS: Readonly<Record<string, string>> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.pyi': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  '.cs': 'c-sharp',
  '.rb': 'ruby',
  '.php': 'php',
  '.sh': 'bash',
  '.bash': 'bash',
  '.cc': 'cpp',
  '.cpp': 'cpp',
  '.cxx': 'cpp',
  '.hpp': 'cpp',
  '.hh': 'cpp',
  '.h': 'cpp',
  '.c': 'cpp',
};

/** What the file must satisfy. */
interface FileCheckSpec {
  /** The file parses with its language's grammar (no ERROR or MISSING node). */
  parses: boolean;
  /** Names that must not be identifiers of the file (strings and comments may keep them). */
  noIdentifier: readonly string[];
  /**
   * Qualified uses that may keep the name (`exec.Command`: another package's name, not the one
   * renamed): an identifier whose qualifier and name read as one of these is accepted.
   */
  allow?: readonly string[] | undefined;
  file: string;
}

/** The verdict: `problems` fail the check; `notes` say what could not be checked, and why. */
interface FileCheckVerdict {
  ok: boolean;
  problems: string[];
  notes: string[];
}

// The narrow part of the package's API used here (its .d.ts declares no module of its name).
interface TsNode {
  type: string;
  text: string;
  startIndex: number;
  endIndex: number;
  previousNamedSibling: TsNode | null;
  isMissing: boolean;
  childCount: number;
  startPosition: { row: number; column: number };
  child(i: number): TsNode | null;
}
interface TsParser {
  setLanguage(language: unknown): void;
  parse(text: string): { rootNode: TsNode & { hasError: boolean }; delete(): void } | null;
  delete(): void;
}
interface TreeSitter {
  Parser: { init(): Promise<void>; new (): TsParser };
  Language: { load(path: string): Promise<unknown> };
}

export const TREE_SITTER_PACKAGE = '@vscode/tree-sitter-wasm';

let loading: Promise<{ ts: TreeSitter; wasmDir: string }> | undefined;
const languages = new Map<string, Promise<unknown>>();

/** The runtime, initialised once per thread; DEPENDENCY_MISSING naming the package when it is not installed. */
function treeSitter(): Promise<{ ts: TreeSitter; wasmDir: string }> {
  loading ??= (async () => {
    const mod = (await importOptional('check-file', () => import('@vscode/tree-sitter-wasm'))) as unknown as
      (TreeSitter & { default?: TreeSitter }) | { default: TreeSitter };
    const ts = ('Parser' in mod ? mod : mod.default!) as TreeSitter;
    await ts.Parser.init();
    const main = createRequire(import.meta.url).resolve(TREE_SITTER_PACKAGE);
    return { ts, wasmDir: `${dirname(main)}${sep}` };
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

/** The grammar of a file, by its extension; undefined for a language the package has none for. */
function grammarOf(file: string): string | undefined {
  return GRAMMARS[extname(file).toLowerCase()];
}

/** Whether the parser package can be loaded here (`plan` writes the parser check only then). */
export async function parserAvailable(): Promise<boolean> {
  try {
    await treeSitter();
    return true;
  } catch (err) {
    if (isForkcacheError(err) && err.code === 'DEPENDENCY_MISSING') return false;
    throw err;
  }
}

interface IdentifierHit {
  name: string;
  row: number;
  column: number;
  /** `exec.Command`, `os.path`, `std::mem::take`: the name with what qualifies it, when something does. */
  qualified: string | undefined;
}

/** A member or scoped name (`a.b`, `a::b`, `a->b`): its qualifier joined to it, spaces dropped. */
function qualifiedOf(node: TsNode, source: string): string | undefined {
  const before = node.previousNamedSibling;
  if (!before) return undefined;
  const between = source.slice(before.endIndex, node.startIndex).replace(/\s+/g, '');
  if (!/^(?:\.|::|->|\?\.)$/.test(between)) return undefined;
  return source.slice(before.startIndex, node.endIndex).replace(/\s+/g, '');
}

/** Nodes whose type is an identifier of some kind (`identifier`, `field_identifier`, `type_identifier`, …) naming one of `names`. */
function identifierHits(root: TsNode, names: ReadonlySet<string>, source: string): IdentifierHit[] {
  const hits: IdentifierHit[] = [];
  const stack: TsNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type.endsWith('identifier') && names.has(node.text))
      hits.push({
        name: node.text,
        row: node.startPosition.row,
        column: node.startPosition.column,
        qualified: qualifiedOf(node, source),
      });
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child) stack.push(child);
    }
  }
  return hits.sort((a, b) => a.row - b.row || a.column - b.column);
}

/** The first ERROR or MISSING node, depth first (where a parse failed). */
function firstError(root: TsNode): TsNode | undefined {
  const stack: TsNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'ERROR' || node.isMissing) return node;
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child) stack.push(child);
    }
  }
  return undefined;
}

/** A name as a whole word of the text: the check plans made before (`grep -qw`), for the fallback. */
function hasWord(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`).test(text);
}

/** The word check, when no parse is possible: what `plan` wrote before this check existed. */
function wordCheck(spec: FileCheckSpec, text: string, why: string): FileCheckVerdict {
  const problems = spec.noIdentifier
    .filter((name) => hasWord(text, name))
    .map((name) => `${spec.file}: ${name} is still in the file (word check: ${why})`);
  const notes = [`${spec.file}: ${why}; checked by words instead${spec.parses ? ', and not parsed' : ''}`];
  return { ok: problems.length === 0, problems, notes };
}

/** Check one file's text against `spec`. */
export async function checkFileText(spec: FileCheckSpec, text: string): Promise<FileCheckVerdict> {
  const grammar = grammarOf(spec.file);
  if (grammar === undefined)
    return wordCheck(spec, text, `no grammar for ${extname(spec.file) || 'a file without an extension'}`);
  let loaded: { ts: TreeSitter; wasmDir: string };
  try {
    loaded = await treeSitter();
  } catch (err) {
    if (!isForkcacheError(err) || err.code !== 'DEPENDENCY_MISSING') throw err;
    return wordCheck(spec, text, `${TREE_SITTER_PACKAGE} is not installed (npm install ${TREE_SITTER_PACKAGE})`);
  }
  let language = languages.get(grammar);
  if (!language) {
    language = loaded.ts.Language.load(`${loaded.wasmDir}tree-sitter-${grammar}.wasm`);
    languages.set(grammar, language);
  }
  const parser = new loaded.ts.Parser();
  try {
    parser.setLanguage(await language);
    const tree = parser.parse(text);
    if (!tree) return { ok: false, problems: [`${spec.file}: the ${grammar} parser returned no tree`], notes: [] };
    try {
      const problems: string[] = [];
      const at = (n: { row: number; column: number }): string => `${spec.file}:${n.row + 1}:${n.column + 1}`;
      if (spec.parses && tree.rootNode.hasError) {
        const bad = firstError(tree.rootNode);
        const where = bad ? at(bad.startPosition) : spec.file;
        const what = bad?.isMissing ? `missing ${bad.type}` : 'syntax error';
        problems.push(`${where}: does not parse as ${grammar} (${what})`);
      }
      const allowed = new Set(spec.allow ?? []);
      for (const hit of identifierHits(tree.rootNode, new Set(spec.noIdentifier), text)) {
        if (hit.qualified !== undefined && allowed.has(hit.qualified)) continue;
        problems.push(
          hit.qualified === undefined
            ? `${at(hit)}: ${hit.name} is still an identifier (strings and comments may keep it)`
            : `${at(hit)}: ${hit.name} is still an identifier, in ${hit.qualified} (when that is another package's or type's name, it is not the one renamed: leave it and say so in your report; the plan can accept it with --allow ${hit.qualified})`,
        );
      }
      return { ok: problems.length === 0, problems, notes: [] };
    } finally {
      tree.delete();
    }
  } finally {
    parser.delete();
  }
}

/**
 * The words after `forkcache check-file`: `--parses`, `--no-identifier NAME` (repeatable), then
 * the file. Bad input is INVALID_FLAG naming the option.
 */
export function parseCheckFileArgs(words: readonly string[]): FileCheckSpec {
  let parses = false;
  const noIdentifier: string[] = [];
  const allow: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--parses') parses = true;
    else if (word === '--no-identifier') {
      const name = words[++i];
      if (name === undefined || name === '')
        throw new ForkcacheError('INVALID_FLAG', '--no-identifier: expected a name after it', {
          data: { field: '--no-identifier' },
        });
      noIdentifier.push(name);
    } else if (word === '--allow') {
      const name = words[++i];
      if (name === undefined || name === '')
        throw new ForkcacheError('INVALID_FLAG', '--allow: expected a qualified name after it (exec.Command)', {
          data: { field: '--allow' },
        });
      allow.push(name);
    } else if (word.startsWith('--'))
      throw new ForkcacheError(
        'INVALID_FLAG',
        `check-file: unknown option ${word} (expected --parses, --no-identifier NAME, --allow QUALIFIED)`,
        { data: { field: word } },
      );
    else files.push(word);
  }
  if (files.length !== 1)
    throw new ForkcacheError('INVALID_FLAG', `check-file: expected one file, got ${files.length}`, {
      data: { field: 'file' },
    });
  if (!parses && noIdentifier.length === 0)
    throw new ForkcacheError(
      'INVALID_FLAG',
      'check-file: nothing to check: give --parses and/or --no-identifier NAME',
      {
        data: { field: '--parses' },
      },
    );
  return { parses, noIdentifier, allow, file: files[0]! };
}
