import type { FileHandle } from 'node:fs/promises';
import { toolFailure } from '../result.ts';

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

interface LineRange {
  /** First line, 1-based. */
  readonly offset: number;
  /** Number of lines; undefined for "to the end of the file". */
  readonly limit: number | undefined;
}

/** Lines of a file as read: their bytes, and where they stop. */
interface LineSlice {
  readonly bytes: Buffer;
  /** The last line included (`offset - 1` for an empty file). */
  readonly lastLine: number;
  /** True when the range did not fit in `maxBytes` and was cut after `lastLine`. */
  readonly truncated: boolean;
}

/**
 * The bytes of lines `offset .. offset+limit-1` of a file, line terminators included, found by
 * scanning in chunks so a file far over the read limit can still be read in parts. A range
 * over `maxBytes` is cut after the last whole line that fits (`truncated`: the caller says how
 * to read on). Fails when the range starts past the end, or when its first line alone is over
 * `maxBytes` (nothing whole could be shown).
 */
export async function sliceLines(
  handle: FileHandle,
  range: LineRange,
  maxBytes: number,
  display: string,
  signal: AbortSignal | undefined,
): Promise<LineSlice> {
  const lastLine = range.limit === undefined ? Infinity : range.offset + range.limit - 1;
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let line = 1; // the line the next byte belongs to
  let start = range.offset === 1 ? 0 : -1;
  let end = -1;
  let pos = 0;
  let lastByte = -1;
  let truncated = false;

  // the range is over the limit from the current line on: keep the lines before it
  const cut = (): void => {
    if (line === range.offset)
      throw toolFailure(
        'TOOL_FILE_TOO_LARGE',
        `${display}: line ${line} alone is over the read limit of ${maxBytes} bytes`,
      );
    truncated = true;
  };

  let fitEnd = start; // end of the last whole line of the range that fits
  scan: for (;;) {
    signal?.throwIfAborted();
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, pos);
    if (bytesRead === 0) break;
    let from = 0;
    for (;;) {
      const i = chunk.indexOf(NEWLINE, from);
      if (i === -1 || i >= bytesRead) break;
      const after = pos + i + 1;
      if (start >= 0 && after - start > maxBytes) {
        cut();
        end = fitEnd;
        break scan;
      }
      if (start >= 0) fitEnd = after;
      if (line === lastLine) {
        end = after;
        break scan;
      }
      line += 1;
      if (line === range.offset) start = fitEnd = after;
      from = i + 1;
    }
    lastByte = chunk[bytesRead - 1] ?? -1;
    pos += bytesRead;
    if (start >= 0 && pos - start > maxBytes) {
      cut();
      end = fitEnd;
      break;
    }
  }

  if (end === -1) {
    // End of file. A final newline does not open one more (empty) line.
    const total = pos === 0 ? 0 : lastByte === NEWLINE ? line - 1 : line;
    if (range.offset > Math.max(total, 1)) {
      throw toolFailure(
        'TOOL_INPUT_INVALID',
        `${display}: offset ${range.offset} is past the end of the file (${total} lines)`,
      );
    }
    end = pos;
    line = Math.max(total, range.offset - 1);
  } else if (truncated) line -= 1;
  if (start < 0) start = end; // offset 1 of an empty file
  const out = Buffer.alloc(end - start);
  let got = 0;
  while (got < out.length) {
    const { bytesRead } = await handle.read(out, got, out.length - got, start + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return { bytes: out.subarray(0, got), lastLine: line, truncated };
}
