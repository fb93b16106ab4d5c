import { readFileSync } from 'node:fs';
import { ForkcacheError, type ErrorCode } from './errors.ts';

/**
 * Read and parse a JSON file. A missing, unreadable or malformed file is a ForkcacheError with
 * `code`, whose message names what the file is and its path: `model table m.json: not valid
 * JSON (Unexpected token ...)`.
 */
export function readJsonFile(path: string, what: string, code: ErrorCode = 'INVALID_ARGUMENT'): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    const err = cause as NodeJS.ErrnoException;
    const reason = err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new ForkcacheError(code, `${what} ${path}: cannot read (${reason})`, { cause, data: { path } });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new ForkcacheError(code, `${what} ${path}: not valid JSON (${(cause as Error).message})`, { cause, data: { path } });
  }
}
