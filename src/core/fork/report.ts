import { REPORT_FIELDS } from '../wire/fork-text.ts';

export type ReportField = (typeof REPORT_FIELDS)[number];

/** A fork's final report, split into its labelled fields. */
export interface ForkReport {
  scope?: string;
  result?: string;
  keyFiles?: string;
  filesChanged?: string;
  issues?: string;
  /** Paths listed under `Files changed:` (empty for "none"). */
  files: string[];
  /** Fields that were not found, by label (`['Key files', 'Issues']`). */
  missing: ReportField[];
  /** Text before the first field (models sometimes add a preamble). */
  preamble: string;
}

const KEYS: Record<ReportField, 'scope' | 'result' | 'keyFiles' | 'filesChanged' | 'issues'> = {
  Scope: 'scope',
  Result: 'result',
  'Key files': 'keyFiles',
  'Files changed': 'filesChanged',
  Issues: 'issues',
};

// A label at the start of a line, tolerating list bullets, markdown emphasis and headings:
// "Scope: …", "- **Result:** …", "## Key files:".
const LABEL = new RegExp(
  String.raw`^[ \t]*(?:[-*+][ \t]+|#{1,6}[ \t]+)?(?:\*\*|__)?(${REPORT_FIELDS.map((f) => f.replace(' ', '[ \\t]+')).join('|')})(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]*`,
  'i',
);

function canonicalLabel(found: string): ReportField {
  const normal = found.replace(/\s+/g, ' ').toLowerCase();
  return REPORT_FIELDS.find((f) => f.toLowerCase() === normal)!;
}

const NONE = /^(none|n\/a|-|nothing|no files?( changed)?)\.?$/i;

function listFiles(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(/[\n,]/)
    .map((item) =>
      item
        .replace(/^[ \t]*[-*+][ \t]+/, '')
        .replace(/`/g, '')
        .trim(),
    )
    .filter((item) => item !== '' && !NONE.test(item));
}

/**
 * Parse the structured report a fork ends with. Tolerant: fields may be missing, reordered,
 * bulleted or bold, span several lines, or be surrounded by extra text. The first occurrence
 * of a field wins; a repeated label continues nothing (its text is kept in the first value).
 */
export function parseReport(text: string): ForkReport {
  const report: ForkReport = { files: [], missing: [], preamble: '' };
  const values = new Map<ReportField, string[]>();
  let current: string[] | undefined;
  const preamble: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const match = LABEL.exec(line);
    if (match) {
      const field = canonicalLabel(match[1]!);
      const rest = line.slice(match[0].length);
      if (!values.has(field)) {
        current = [rest];
        values.set(field, current);
        continue;
      }
    }
    (current ?? preamble).push(line);
  }
  for (const field of REPORT_FIELDS) {
    const lines = values.get(field);
    if (lines === undefined) report.missing.push(field);
    else report[KEYS[field]] = lines.join('\n').trim();
  }
  report.preamble = preamble.join('\n').trim();
  report.files = listFiles(report.filesChanged);
  return report;
}

const firstLine = (text: string, max = 200): string => {
  const line = (text.split('\n').find((l) => l.trim() !== '') ?? '').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** Whether a fork's final answer says it did its directive. */
type ReportVerdict = { done: true } | { done: false; reason: string };

// A Result that *opens* with one of these says the work was not done ("not done", "Failed: …",
// "Could not read …", "Partially done"). Only the opening counts: "renamed 3; the old tests
// failed before" is a result, not a refusal.
const NOT_DONE_RESULT =
  /^[\s*_`"'>-]*(?:not[\s-]+(?:done|completed?|applied|possible)|incomplete|unfinished|fail(?:ed|ure|s)?\b|could\s*(?:not|n['’]t)|can\s*not\b|cannot|can['’]t|unable\b|did\s*(?:not|n['’]t)|was\s*(?:not|n['’]t)\s+able|blocked\b|partial(?:ly)?\b|nothing\s+(?:was\s+)?(?:done|changed)\s+because|skipped\b|gave\s+up|aborted\b)/i;

/**
 * Judge a fork's final text. Not done: an empty text; with `requireReport` (fork children, who
 * are told to end with the labelled report), a report without `Scope:` or `Result:`; and any
 * report whose Result opens by saying the work was not done. Fresh agents of a type have no
 * report rule, so only the empty text and an explicit Result count for them.
 */
export function judgeReport(finalText: string, options: { requireReport: boolean }): ReportVerdict {
  if (finalText.trim() === '') return { done: false, reason: 'the fork ended with an empty final text (no report)' };
  const report = parseReport(finalText);
  if (options.requireReport) {
    const missing = (['Scope', 'Result'] as const).filter((f) => report.missing.includes(f));
    if (missing.length > 0)
      return {
        done: false,
        reason: `the fork's report lacks ${missing.map((f) => `${f}:`).join(' and ')} (a fork ends with a labelled report)`,
      };
  }
  const result = report.result;
  if (result !== undefined && NOT_DONE_RESULT.test(result)) {
    const issues = report.issues === undefined || NONE.test(report.issues.trim()) ? '' : report.issues;
    return {
      done: false,
      reason: `the fork's report says Result: ${firstLine(result)}${issues === '' ? '' : `; Issues: ${firstLine(issues)}`}`,
    };
  }
  return { done: true };
}
