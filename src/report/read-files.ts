import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { type ErrorCode, ForkcacheError } from '../errors.ts';
import { readJsonFile } from '../json-file.ts';
import { formatZodIssues } from '../validation.ts';

/** One parsed line of a JSONL file, with its 1-based line number for error messages. */
export interface JsonlLine {
  line: number;
  value: unknown;
}

/** Error codes for a missing and for a malformed file (reports by default). */
export interface FileErrorCodes {
  missing: ErrorCode;
  invalid: ErrorCode;
}

const REPORT_CODES: FileErrorCodes = { missing: 'REPORT_FILE_MISSING', invalid: 'REPORT_FILE_INVALID' };

function readText(path: string, codes: FileErrorCodes): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ForkcacheError(codes.missing, `${path}: missing (no such file)`, { cause, data: { file: path } });
    throw new ForkcacheError(codes.invalid, `${path}: cannot read (${code ?? (cause as Error).message})`, { cause, data: { file: path } });
  }
}

/** Read a JSON file of a run or of benchmark results (the project's one JSON reader, with the report's codes). */
export function readReportJson(path: string, what: string): unknown {
  return readJsonFile(path, what, REPORT_CODES);
}

/**
 * Read a JSONL file: one JSON object per line, blank lines skipped. Errors name the file and
 * the line. Records are not interpreted here: callers skip the types they do not know, so the
 * format can gain records without breaking older readers.
 */
export function readJsonl(path: string, codes: FileErrorCodes = REPORT_CODES): JsonlLine[] {
  const out: JsonlLine[] = [];
  const text = readText(path, codes);
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
      if (raw.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (cause) {
        // a run killed mid-write leaves its last line cut short: it was never a record
        if (index === lines.length - 1 && !text.endsWith('\n')) return;
        throw new ForkcacheError(codes.invalid, `${path}:${index + 1}: not valid JSON (${(cause as Error).message})`, { cause, data: { file: path, line: index + 1 } });
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new ForkcacheError(codes.invalid, `${path}:${index + 1}: expected a JSON object`, { data: { file: path, line: index + 1 } });
      }
      out.push({ line: index + 1, value });
    });
  return out;
}

/** Validate with a schema; the error names the file (and line) and the bad field paths. */
export function parseAt<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ForkcacheError('REPORT_FILE_INVALID', `${where}: ${formatZodIssues(result.error.issues)}`, { data: { where } });
}

/** The `type` of a JSONL record, or undefined. */
export function recordType(value: unknown): string | undefined {
  const type = (value as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}
