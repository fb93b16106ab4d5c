import type { ToolContext } from '../context.ts';
import { looksBinary, openRegularFile, readAll, replaceAtomically } from '../jail/file-io.ts';
import { withPathLock } from '../path-lock.ts';
import { toolFailure } from '../result.ts';
import type { EditFileInput } from '../schemas.ts';

/** The most replacements one call applies (Claude Code's MultiEdit sends a list). */
const MAX_EDITS_PER_CALL = 200;

/** Non-overlapping occurrences of `needle`, as `split` would cut them. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/**
 * edit_file: exact-text replacement, refusing absent, ambiguous and no-op edits.
 *
 * Forks share the workspace (`isolation: 'none'`), so the read-modify-write runs under the
 * file's lock (no sibling writes between our read and our rename) and the result replaces the
 * file atomically (no sibling reads a half-written file). When `old_string` is gone because a
 * sibling changed the file since this fork read it, the model is told it is a conflict to
 * retry after re-reading, not that its text was wrong.
 */
export async function editFile(input: EditFileInput, ctx: ToolContext): Promise<string> {
  const [count] = await editFileMany(input.path, [input], ctx);
  return `Edited ${input.path}: replaced ${count} occurrence${count === 1 ? '' : 's'}.`;
}

/** One replacement of a multi-edit (Claude Code's `MultiEdit`). */
interface TextEdit {
  readonly old_string: string;
  readonly new_string: string;
  readonly replace_all?: boolean | undefined;
}

/**
 * Apply `edits` in order to one file, all or none: each edit sees the text the previous ones
 * made, a failing edit (absent, ambiguous, no-op) leaves the file untouched, and the result
 * lands in one atomic replace under the file's lock. Returns the occurrences each replaced.
 */
export async function editFileMany(display: string, edits: readonly TextEdit[], ctx: ToolContext): Promise<number[]> {
  const which = (i: number): string => (edits.length === 1 ? '' : `edit ${i + 1}: `);
  // each edit scans the whole text: their number bounds the call's CPU, whatever the tool set
  if (edits.length > MAX_EDITS_PER_CALL)
    throw toolFailure(
      'TOOL_INPUT_INVALID',
      `${edits.length} edits in one call, over the limit of ${MAX_EDITS_PER_CALL}; split them over several calls`,
    );
  edits.forEach((edit, i) => {
    if (edit.old_string === edit.new_string) {
      throw toolFailure(
        'TOOL_EDIT_FAILED',
        `${which(i)}old_string and new_string are identical: the edit would change nothing`,
        { reason: 'noop' },
      );
    }
  });
  const { real } = await ctx.jail.resolve(display, 'existing');
  return withPathLock(real, ctx.signal, async () => {
    const file = await openRegularFile(real, display, ctx.jail);
    let text: string;
    try {
      if (await looksBinary(file.handle)) {
        throw toolFailure(
          'TOOL_BINARY_FILE',
          `${display} is a binary file (it contains NUL bytes); only text is edited`,
        );
      }
      if (file.size > ctx.limits.maxEditBytes) {
        throw toolFailure(
          'TOOL_FILE_TOO_LARGE',
          `${display} is ${file.size} bytes, over the edit limit of ${ctx.limits.maxEditBytes} bytes`,
        );
      }
      text = (await readAll(file, ctx.signal)).toString('utf8');
    } finally {
      await file.handle.close();
    }
    const counts: number[] = [];
    let bytes = Buffer.byteLength(text);
    for (const [i, edit] of edits.entries()) {
      const count = countOccurrences(text, edit.old_string);
      if (count === 0) {
        if (ctx.seen.changedSince(real, file.version)) {
          ctx.seen.see(real, file.version);
          throw toolFailure(
            'TOOL_EDIT_CONFLICT',
            `${display} was changed by another fork or process since you last read it, and old_string is no longer in it; read the file again, then retry the edit`,
            { reason: 'conflict' },
          );
        }
        throw toolFailure(
          'TOOL_EDIT_FAILED',
          `${which(i)}old_string was not found in ${display}; it must match the file exactly, whitespace and indentation included (read the file again)`,
          { reason: 'not-found' },
        );
      }
      if (count > 1 && edit.replace_all !== true) {
        throw toolFailure(
          'TOOL_EDIT_FAILED',
          `${which(i)}old_string occurs ${count} times in ${display}; add surrounding lines to make it unique, or set replace_all: true`,
          { reason: 'ambiguous', occurrences: count },
        );
      }
      // The result's size is known before it is built (split/join replaces exactly the `count`
      // occurrences counted): an edit that would grow the file past the limit is refused here,
      // so 40 `e` -> `ee` edits cannot double the text 40 times in memory.
      const after = bytes + count * (Buffer.byteLength(edit.new_string) - Buffer.byteLength(edit.old_string));
      if (after > ctx.limits.maxEditBytes) {
        throw toolFailure(
          'TOOL_FILE_TOO_LARGE',
          `${which(i)}the edit would make ${display} ${after} bytes, over the edit limit of ${ctx.limits.maxEditBytes} bytes; nothing was changed`,
          { reason: 'too-large' },
        );
      }
      bytes = after;
      // split/join, not String.replace: a replacement string's `$&` or `$1` must stay literal.
      text = text.split(edit.old_string).join(edit.new_string);
      counts.push(count);
    }
    ctx.signal?.throwIfAborted(); // last point where stopping leaves the file untouched
    ctx.seen.see(real, await replaceAtomically(real, Buffer.from(text, 'utf8'), ctx.jail, display, file.mode));
    return counts;
  });
}
