/*
 * How `read_file` says it returned only part of a file. The tool writes it; the emulator's
 * scripted models read it to page through a large file the way a model would. It ends the
 * tool result, on a line of its own, after the last whole line shown.
 */

/** The last line of a partial read: what it showed, and the `offset` the rest starts at. */
export function readTruncationNote(note: { path: string; firstLine: number; lastLine: number; bytes: number }): string {
  return `[truncated: ${note.path} is ${note.bytes} bytes, over the read limit; this shows lines ${note.firstLine}-${note.lastLine}. Read the rest with offset: ${note.lastLine + 1}]`;
}

const NOTE = /\[truncated: [^\n]* Read the rest with offset: (\d+)\]$/;

/** A read_file result split into the file's text and, when it was partial, the next offset. */
export function splitReadResult(result: string): { text: string; nextOffset: number | undefined } {
  const match = NOTE.exec(result);
  if (!match || (match.index > 0 && result[match.index - 1] !== '\n')) return { text: result, nextOffset: undefined };
  return { text: result.slice(0, match.index), nextOffset: Number(match[1]) };
}
