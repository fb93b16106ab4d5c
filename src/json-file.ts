import { readFileSync } from 'node:fs';
import { ForkcacheError, type ErrorCode } from './errors.ts';

/** One code for any failure, or one for a missing file and one for the rest (reports tell them apart). */
export type JsonFileCodes = ErrorCode | { missing: ErrorCode; invalid: ErrorCode };

/** The error codes of a failed read: one for a missing file, one for the rest. */
export function splitCodes(codes: JsonFileCodes): { missing: ErrorCode; invalid: ErrorCode } {
  return typeof codes === 'string' ? { missing: codes, invalid: codes } : codes;
}

/** Read a text file; a failure names what the file is and its path: `plan p.json: cannot read (no such file)`. */
export function readTextFile(path: string, what: string, codes: JsonFileCodes = 'INVALID_ARGUMENT'): string {
  const { missing, invalid } = splitCodes(codes);
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    const err = cause as NodeJS.ErrnoException;
    const reason = err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new ForkcacheError(err.code === 'ENOENT' ? missing : invalid, `${what} ${path}: cannot read (${reason})`, { cause, data: { path } });
  }
}

/**
 * Read and parse a JSON file: the one reader of JSON files, with one error style. A missing,
 * unreadable or malformed file is a ForkcacheError whose message names what the file is and
 * its path: `model table m.json: not valid JSON (Unexpected token ...)`, `plan p.json: cannot
 * read (no such file)`. `data.path` is the path. (JSONL files: src/run-dir/jsonl.ts.)
 */
export function readJsonFile(path: string, what: string, codes: JsonFileCodes = 'INVALID_ARGUMENT'): unknown {
  const text = readTextFile(path, what, codes);
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new ForkcacheError(splitCodes(codes).invalid, `${what} ${path}: not valid JSON (${(cause as Error).message})`, { cause, data: { path } });
  }
}
