import type { ToolContext } from './context.ts';
import { looksBinary, openRegularFile, readAll } from './file-io.ts';
import { sliceLines } from './line-slice.ts';
import { toolFailure } from './result.ts';
import type { ReadFileInput } from './schemas.ts';

/** read_file: the file's text, whole or lines `offset .. offset+limit-1`. */
export async function readFile(input: ReadFileInput, ctx: ToolContext): Promise<string> {
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
    if (input.offset === undefined && input.limit === undefined) {
      if (file.size > max) {
        throw toolFailure(
          'TOOL_FILE_TOO_LARGE',
          `${input.path} is ${file.size} bytes, over the read limit of ${max} bytes; read it in parts with offset and limit (in lines), or search it with grep`,
        );
      }
      return (await readAll(file, ctx.signal)).toString('utf8');
    }
    const range = { offset: input.offset ?? 1, limit: input.limit };
    return (await sliceLines(file.handle, range, max, input.path, ctx.signal)).toString('utf8');
  } finally {
    await file.handle.close();
  }
}
