import { ForkcacheError } from '../util/errors.ts';
import { type JsonFileCodes, readTextFile, splitCodes } from '../util/json-file.ts';

/** One parsed line of a JSONL file, with its 1-based line number for error messages. */
export interface JsonlLine {
  line: number;
  value: object;
  /** The line's text as written (its MAC covers these bytes: run-mac.ts). */
  raw: string;
}

/**
 * Read a JSONL file: one JSON object per line, blank lines skipped. The one reader of the run
 * directory's JSONL files (events, transcripts) and of imported sessions, with one rule for a
 * torn last line:
 *
 * - a last line **without its newline** that does not parse is the cut-short write of a killed
 *   process: it was never a record, and is dropped (the transcript writer cuts it off before
 *   appending, see transcript.ts);
 * - any other line that does not parse, including a complete last line, is corruption: an
 *   error naming the file and the line (`events /r/events.jsonl:5: not valid JSON (...)`).
 *
 * Records are not interpreted here: callers skip the types they do not know, so the formats
 * can gain records without breaking older readers.
 */
export function readJsonl(path: string, what: string, codes: JsonFileCodes = 'INVALID_RUN_DIR'): JsonlLine[] {
  const { invalid } = splitCodes(codes);
  const text = readTextFile(path, what, codes);
  const lines = text.split('\n');
  const out: JsonlLine[] = [];
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return;
    const where = `${what} ${path}:${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (cause) {
      // only the very last line can be torn, and only when the file does not end with a newline
      if (index === lines.length - 1) return;
      throw new ForkcacheError(invalid, `${where}: not valid JSON (${(cause as Error).message})`, {
        cause,
        data: { path, line: index + 1 },
      });
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ForkcacheError(invalid, `${where}: expected a JSON object`, { data: { path, line: index + 1 } });
    }
    out.push({ line: index + 1, value, raw });
  });
  return out;
}

/** The `type` of a JSONL record, or undefined. */
export function recordType(value: unknown): string | undefined {
  const type = (value as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}
