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
