import { readFileSync } from 'node:fs';
import { ForkcacheError, type CodeWithData, type FileData } from './errors.ts';
import { findJsonShapeProblem } from './json-shape.ts';

/** One code for any failure, or one for a missing file and one for the rest (reports tell them apart). */
/** The codes a file reader may be given: those whose data can be a file's (`{ path, line }`). */
export type FileCode = CodeWithData<FileData>;
export type JsonFileCodes = FileCode | { missing: FileCode; invalid: FileCode };

/** The error codes of a failed read: one for a missing file, one for the rest. */
export function splitCodes(codes: JsonFileCodes): { missing: FileCode; invalid: FileCode } {
  return typeof codes === 'string' ? { missing: codes, invalid: codes } : codes;
}

/** Offset of the first byte that does not decode as UTF-8 (binary search on fatal decoding of prefixes). */
function firstInvalidUtf8(bytes: Buffer): number {
  let good = 0;
  let bad = bytes.length;
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    try {
      // stream: an incomplete sequence at the cut is not an error, an invalid byte is
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      good = mid;
    } catch {
      bad = mid;
    }
  }
  return good;
}

/**
 * Read a UTF-8 text file; a failure names what the file is and its path: `plan p.json: cannot
 * read (no such file)`. Invalid UTF-8 is an error naming the byte, never U+FFFD sent to a
 * model in place of the text.
 */
export function readTextFile(path: string, what: string, codes: JsonFileCodes = 'INVALID_RUN_DIR'): string {
  const { missing, invalid } = splitCodes(codes);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (cause) {
    const err = cause as NodeJS.ErrnoException;
    const reason = err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new ForkcacheError(err.code === 'ENOENT' ? missing : invalid, `${what} ${path}: cannot read (${reason})`, {
      cause,
      data: { path },
    });
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new ForkcacheError(invalid, `${what} ${path}: not valid UTF-8 (at byte ${firstInvalidUtf8(bytes)})`, {
      cause,
      data: { path },
    });
  }
}

/**
 * Read and parse a JSON file: the one reader of JSON files, with one error style. A missing,
 * unreadable or malformed file is a ForkcacheError whose message names what the file is and
 * its path: `model table m.json: not valid JSON (Unexpected token ...)`, `plan p.json: cannot
 * read (no such file)`; invalid UTF-8, nesting past MAX_JSON_DEPTH and lone surrogates too.
 * `data.path` is the path. (JSONL files: src/core/run-dir/jsonl.ts.)
 */
export function readJsonFile(path: string, what: string, codes: JsonFileCodes = 'INVALID_RUN_DIR'): unknown {
  const text = readTextFile(path, what, codes);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new ForkcacheError(
      splitCodes(codes).invalid,
      `${what} ${path}: not valid JSON (${(cause as Error).message})`,
      { cause, data: { path } },
    );
  }
  // What JSON.parse lets through but nothing downstream can use: runaway nesting, lone surrogates.
  const problem = findJsonShapeProblem(value);
  if (problem)
    throw new ForkcacheError(splitCodes(codes).invalid, `${what} ${path}: ${problem.path}: ${problem.message}`, {
      data: { path, field: problem.path },
    });
  return value;
}
