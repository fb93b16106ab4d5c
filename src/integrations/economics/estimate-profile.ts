import type { EstimatedFork, EstimatedTurn } from './estimate-types.ts';

/**
 * The turns a fork is assumed to make, from what its directive names. These are assumptions,
 * not measurements: each is printed beside the estimate, and each can be changed
 * (`--assume name=value`). The defaults follow what an agent does with one file of a refactor:
 * read it (a page at a time past the read limit), edit it, read it again to check, report.
 */
export interface Assumptions {
  /** Output tokens of a turn that calls a read tool (the call and a line of reasoning). */
  toolCallOutput: number;
  /** Output tokens of a turn that edits a file (the old and new text of the edit). */
  editOutput: number;
  /** Tokens of an edit's result ("replaced 3 occurrences in …"). */
  editResult: number;
  /** Output tokens of the report that ends a fork. */
  reportOutput: number;
  /** Whether an editing fork re-reads its file to check its edit (1) or not (0). */
  verifyRead: number;
  /** Tokens each turn adds besides its output and result (message and tool-result framing). */
  turnOverhead: number;
}

/**
 * A terse agent's turns: a tool call with a line before it, a rename's edit (old and new text,
 * `replace_all`), a five-field report. A model that thinks aloud writes more: raise them.
 */
export const DEFAULT_ASSUMPTIONS: Readonly<Assumptions> = Object.freeze({
  toolCallOutput: 60,
  editOutput: 100,
  editResult: 30,
  reportOutput: 150,
  verifyRead: 1,
  turnOverhead: 20,
});

/** What is known of one fork before it runs. */
export interface ForkFacts {
  directiveTokens: number;
  /** `edit` when the directive changes files, `read` when it only reads and reports. */
  kind: 'edit' | 'read';
  /** The files it will read: tokens of each as read_file returns it, and the reads it takes. */
  files: readonly { path: string; tokens: number; pages: number }[];
}

const EDIT_VERBS =
  /\b(rename|replace|change|edit|update|fix|refactor|add|remove|delete|convert|migrate|rewrite|move|insert|implement|upgrade)\b/i;
const READ_VERBS = /\b(read|report|summari[sz]e|review|list|find|explain|describe|count|check|audit|inspect)\b/i;

/** Whether a directive edits (the default: a directive that says neither is assumed to edit). */
export function directiveKind(directive: string): 'edit' | 'read' {
  if (EDIT_VERBS.test(directive)) return 'edit';
  return READ_VERBS.test(directive) ? 'read' : 'edit';
}

function reads(files: ForkFacts['files'], a: Assumptions, again: boolean): EstimatedTurn[] {
  return files.flatMap((f) =>
    Array.from({ length: Math.max(1, f.pages) }, (_, p) => ({
      label: `${again ? 're-read' : 'read'} ${f.path}${f.pages > 1 ? ` (${p + 1}/${f.pages})` : ''}`,
      output: a.toolCallOutput,
      result: Math.ceil(f.tokens / Math.max(1, f.pages)),
    })),
  );
}

/** The turns of one fork under the assumptions. */
export function profileFork(facts: ForkFacts, a: Assumptions = DEFAULT_ASSUMPTIONS): EstimatedFork {
  const turns = [...reads(facts.files, a, false)];
  if (facts.kind === 'edit') {
    for (const f of facts.files) turns.push({ label: `edit ${f.path}`, output: a.editOutput, result: a.editResult });
    if (a.verifyRead > 0) turns.push(...reads(facts.files, a, true));
  }
  return { directiveTokens: facts.directiveTokens, turns, reportTokens: a.reportOutput };
}

/** `name=value,name=value` (repeatable) over the defaults; a bad name or value names itself. */
export function parseAssumptions(specs: readonly string[]): { assumptions: Assumptions; error?: string } {
  const assumptions: Assumptions = { ...DEFAULT_ASSUMPTIONS };
  for (const spec of specs.flatMap((s) => s.split(','))) {
    const [name, value] = spec.split('=').map((x) => x.trim());
    if (!name || !(name in DEFAULT_ASSUMPTIONS))
      return {
        assumptions,
        error: `unknown assumption "${name ?? ''}" (known: ${Object.keys(DEFAULT_ASSUMPTIONS).join(', ')})`,
      };
    if (value === undefined || !/^\d+$/.test(value) || Number(value) > 1_000_000)
      return {
        assumptions,
        error: `${name}: expected a whole number of tokens up to 1,000,000 (got "${value ?? ''}")`,
      };
    assumptions[name as keyof Assumptions] = Number(value);
  }
  return { assumptions };
}
