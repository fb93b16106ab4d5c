import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext } from './context.ts';
import { OPEN_GUARDS } from './file-io.ts';
import { fromFsError, toolFailure } from './result.ts';
import type { WriteFileInput } from './schemas.ts';

/**
 * write_file: create or replace a file. The jail has checked the deepest existing ancestor of
 * the path, so the directories created here are new ones inside the workspace.
 */
export async function writeFile(input: WriteFileInput, ctx: ToolContext): Promise<string> {
  const target = await ctx.jail.resolve(input.path, 'create');
  ctx.signal?.throwIfAborted();
  const data = Buffer.from(input.content, 'utf8');
  try {
    if (!target.exists) await mkdir(path.dirname(target.real), { recursive: true });
    const handle = await open(target.real, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | OPEN_GUARDS, 0o666);
    try {
      // A FIFO or device at the path: writing there would not create a file the model can read.
      if (!(await handle.stat()).isFile()) throw toolFailure('TOOL_IO_ERROR', `${input.path} is not a regular file`);
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw fromFsError(err, input.path);
  }
  return `${target.exists ? 'Overwrote' : 'Created'} ${input.path} (${data.length} bytes).`;
}
