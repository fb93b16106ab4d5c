import type { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { type JsonFileCodes, readJsonFile } from '../../core/util/json-file.ts';
import { type JsonlLine, readJsonl } from '../../core/run-dir/jsonl.ts';
import { formatZodIssues } from '../../core/util/validation.ts';

/** A report tells a missing file (REPORT_FILE_MISSING) from a malformed one. */
const REPORT_CODES: JsonFileCodes = { missing: 'REPORT_FILE_MISSING', invalid: 'REPORT_FILE_INVALID' };

/** Read a JSON file of a run or of benchmark results (the project's one JSON reader, with the report's codes). */
export function readReportJson(path: string, what: string): unknown {
  return readJsonFile(path, what, REPORT_CODES);
}

/** Read a JSONL file of a run (the run directory's one JSONL reader, with the report's codes). */
export function readReportJsonl(path: string, what: string): JsonlLine[] {
  return readJsonl(path, what, REPORT_CODES);
}

/** Validate with a schema; the error names the file (and line) and the bad field paths. */
export function parseAt<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ForkcacheError('REPORT_FILE_INVALID', `${where}: ${formatZodIssues(result.error.issues)}`, {
    data: { where },
  });
}
