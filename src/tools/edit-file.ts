import type { ToolContext } from './context.ts';
import { looksBinary, openRegularFile, overwrite, readAll } from './file-io.ts';
import { toolFailure } from './result.ts';
import type { EditFileInput } from './schemas.ts';

/** Non-overlapping occurrences of `needle`, as `split` would cut them. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/** edit_file: exact-text replacement, refusing absent, ambiguous and no-op edits. */
export async function editFile(input: EditFileInput, ctx: ToolContext): Promise<string> {
  if (input.old_string === input.new_string) {
    throw toolFailure('TOOL_EDIT_FAILED', 'old_string and new_string are identical: the edit would change nothing', { reason: 'noop' });
  }
  const { real } = await ctx.jail.resolve(input.path, 'existing');
  const file = await openRegularFile(real, input.path, true);
  try {
    if (await looksBinary(file.handle)) {
      throw toolFailure('TOOL_BINARY_FILE', `${input.path} is a binary file (it contains NUL bytes); edit_file only edits text`);
    }
    if (file.size > ctx.limits.maxEditBytes) {
      throw toolFailure('TOOL_FILE_TOO_LARGE', `${input.path} is ${file.size} bytes, over the edit limit of ${ctx.limits.maxEditBytes} bytes`);
    }
    const text = (await readAll(file, ctx.signal)).toString('utf8');
    const count = countOccurrences(text, input.old_string);
    if (count === 0) {
      throw toolFailure(
        'TOOL_EDIT_FAILED',
        `old_string was not found in ${input.path}; it must match the file exactly, whitespace and indentation included (read the file again)`,
        { reason: 'not-found' },
      );
    }
    if (count > 1 && input.replace_all !== true) {
      throw toolFailure(
        'TOOL_EDIT_FAILED',
        `old_string occurs ${count} times in ${input.path}; add surrounding lines to make it unique, or set replace_all: true`,
        { reason: 'ambiguous', occurrences: count },
      );
    }
    // split/join, not String.replace: a replacement string's `$&` or `$1` must stay literal.
    const updated = text.split(input.old_string).join(input.new_string);
    ctx.signal?.throwIfAborted(); // last point where stopping leaves the file untouched
    await overwrite(file.handle, Buffer.from(updated, 'utf8'));
    return `Edited ${input.path}: replaced ${count} occurrence${count === 1 ? '' : 's'}.`;
  } finally {
    await file.handle.close();
  }
}
