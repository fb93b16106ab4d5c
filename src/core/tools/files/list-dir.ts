import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext } from '../context.ts';
import type { ForkcacheError } from '../../util/errors.ts';
import { fromFsError, isToolFailure, toolFailure } from '../result.ts';
import type { ListDirInput } from '../schemas.ts';
import { byCodeUnit, kindOf, readDirChecked } from '../jail/walk.ts';

const SUFFIX = { dir: '/', symlink: '@', file: '', other: '' } as const;

/** list_dir: one entry per line, sorted; `name/` for directories, `name@` for symlinks (as `ls -F`). */
export async function listDir(input: ListDirInput, ctx: ToolContext): Promise<string> {
  const { real } = await ctx.jail.resolve(input.path, 'existing');
  ctx.signal?.throwIfAborted();
  const notADirectory = (): ForkcacheError =>
    toolFailure('TOOL_IO_ERROR', `${input.path} is a file, not a directory; use read_file`);
  let names: string[];
  try {
    if (!(await stat(real)).isDirectory()) throw notADirectory();
    const entries = await readDirChecked(real, ctx.jail, input.path);
    // `.git` and forkcache's directories are not part of the fork's world: not even their names
    names = entries
      .filter((e) => ctx.jail.refusal(path.join(real, e.name)) === undefined)
      .map((e) => e.name + SUFFIX[kindOf(e)]);
  } catch (err) {
    if (isToolFailure(err)) throw err;
    if ((err as { code?: unknown }).code === 'ENOTDIR') throw notADirectory();
    throw fromFsError(err, input.path);
  }
  if (names.length === 0) return '(empty directory)';
  names.sort(byCodeUnit);
  const max = ctx.limits.maxListEntries;
  if (names.length <= max) return names.join('\n');
  return `${names.slice(0, max).join('\n')}\n[truncated: ${names.length} entries, first ${max} shown; use glob to narrow]`;
}
