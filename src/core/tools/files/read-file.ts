import { readTruncationNote } from '../../wire/read-file-text.ts';
import type { ToolContext } from '../context.ts';
import { looksBinary, openRegularFile, readAll } from '../jail/file-io.ts';
import { sliceLines } from './line-slice.ts';
import { toolFailure } from '../result.ts';
import type { ReadFileInput } from '../schemas.ts';

/**
 * read_file: the file's text, whole or lines `offset .. offset+limit-1`. What does not fit in
 * the read limit is cut after the last whole line that does, and the result ends with a note
 * saying so and naming the `offset` to read on from (src/core/wire/read-file-text.ts): a file of
 * any size can be read in parts, and the model always knows when it saw only part of one.
 */
export async function readFile(input: ReadFileInput, ctx: ToolContext): Promise<string> {
  const { text, note } = await readFileParts(input, ctx);
  return note === undefined ? text : `${text}${note}`;
}

/**
 * The read as the text shown and, when the file did not fit, the note that ends it: a client
 * tool that numbers lines (Claude Code's `Read`) numbers the text and keeps the note as is.
 * `firstLine` is the number of the text's first line.
 */
export async function readFileParts(
  input: ReadFileInput,
  ctx: ToolContext,
): Promise<{ text: string; note: string | undefined; firstLine: number }> {
  const { real } = await ctx.jail.resolve(input.path, 'existing');
  const file = await openRegularFile(real, input.path, ctx.jail);
  // Files are replaced by rename, never rewritten in place: this open file stays the version
  // it was at open, whatever a sibling does meanwhile. That version is what the fork saw.
  ctx.seen.see(real, file.version);
  try {
    if (await looksBinary(file.handle)) {
      throw toolFailure(
        'TOOL_BINARY_FILE',
        `${input.path} is a binary file (it contains NUL bytes); read_file only returns text`,
      );
    }
    const max = ctx.limits.maxReadBytes;
    if (input.offset === undefined && input.limit === undefined && file.size <= max)
      return { text: (await readAll(file, ctx.signal)).toString('utf8'), note: undefined, firstLine: 1 };
    const range = { offset: input.offset ?? 1, limit: input.limit };
    const part = await sliceLines(file.handle, range, max, input.path, ctx.signal);
    const text = part.bytes.toString('utf8');
    if (!part.truncated) return { text, note: undefined, firstLine: range.offset };
    const note = readTruncationNote({
      path: input.path,
      firstLine: range.offset,
      lastLine: part.lastLine,
      bytes: file.size,
    });
    return { text, note, firstLine: range.offset };
  } finally {
    await file.handle.close();
  }
}
