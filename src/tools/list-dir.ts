import { readdir } from 'node:fs/promises';
import type { ToolContext } from './context.ts';
import { fromFsError, toolFailure } from './result.ts';
import type { ListDirInput } from './schemas.ts';
import { byCodeUnit, kindOf } from './walk.ts';

const SUFFIX = { dir: '/', symlink: '@', file: '', other: '' } as const;

/** list_dir: one entry per line, sorted; `name/` for directories, `name@` for symlinks (as `ls -F`). */
export async function listDir(input: ListDirInput, ctx: ToolContext): Promise<string> {
  const { real } = await ctx.jail.resolve(input.path, 'existing');
  ctx.signal?.throwIfAborted();
  let names: string[];
  try {
    const entries = await readdir(real, { withFileTypes: true });
    names = entries.map((e) => e.name + SUFFIX[kindOf(e)]);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOTDIR') {
      throw toolFailure('TOOL_IO_ERROR', `${input.path} is a file, not a directory; use read_file`);
    }
    throw fromFsError(err, input.path);
  }
  if (names.length === 0) return '(empty directory)';
  names.sort(byCodeUnit);
  const max = ctx.limits.maxListEntries;
  if (names.length <= max) return names.join('\n');
  return `${names.slice(0, max).join('\n')}\n[truncated: ${names.length} entries, first ${max} shown; use glob to narrow]`;
}
