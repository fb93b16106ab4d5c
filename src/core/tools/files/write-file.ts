import { lstat } from 'node:fs/promises';
import type { ToolContext } from '../context.ts';
import { replaceAtomically, versionOf } from '../jail/file-io.ts';
import { withPathLock } from '../path-lock.ts';
import { fromFsError, toolFailure } from '../result.ts';
import type { WriteFileInput } from '../schemas.ts';

/**
 * write_file: create or replace a file, atomically (temp file + rename, under the file's lock:
 * see edit-file.ts). The jail has checked the deepest existing ancestor of the path, so the
 * directories created here are new ones inside the workspace.
 *
 * Replacing a file this fork read and a sibling has changed since would silently undo the
 * sibling's work (the model writes back its old view): that is refused as a conflict.
 */
export async function writeFile(input: WriteFileInput, ctx: ToolContext): Promise<string> {
  const target = await ctx.jail.resolve(input.path, 'create');
  ctx.signal?.throwIfAborted();
  const data = Buffer.from(input.content, 'utf8');
  let existed = false;
  try {
    await withPathLock(target.real, ctx.signal, async () => {
      const current = await lstat(target.real).catch((err: unknown) => {
        if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
        throw err;
      });
      if (current?.isDirectory()) throw toolFailure('TOOL_IO_ERROR', `${input.path}: is a directory`);
      // A FIFO, device or symlink at the path: replacing it would not give the model a file.
      if (current !== undefined && !current.isFile())
        throw toolFailure('TOOL_IO_ERROR', `${input.path} is not a regular file`);
      existed = current !== undefined;
      if (current !== undefined && ctx.seen.changedSince(target.real, versionOf(current))) {
        ctx.seen.see(target.real, versionOf(current));
        throw toolFailure(
          'TOOL_EDIT_CONFLICT',
          `${input.path} was changed by another fork or process since you last read it; writing your version would undo that change. Read the file again, then write it`,
          { reason: 'conflict' },
        );
      }
      ctx.signal?.throwIfAborted();
      ctx.seen.see(
        target.real,
        await replaceAtomically(
          target.real,
          data,
          ctx.jail,
          input.path,
          current ? current.mode & 0o7777 : 0o666 & ~process.umask(),
          !target.exists,
        ),
      );
    });
  } catch (err) {
    throw fromFsError(err, input.path);
  }
  return `${existed ? 'Overwrote' : 'Created'} ${input.path} (${data.length} bytes).`;
}
