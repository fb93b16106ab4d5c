import { ForkcacheError, type ErrorCode, type ToolFailureData } from '../util/errors.ts';

/** The codes a failed tool call carries (the "tools" group of `ERROR_CODES`, and the policy's refusal). */
export type ToolErrorCode = Extract<ErrorCode, `TOOL_${string}` | 'PERMISSION_DENIED'>;

/**
 * What a tool call gives back to the loop. `content` is text for the model; an error result
 * becomes a `tool_result` block with `is_error: true`. `code` lets the engine tell, say, a
 * refused spawn (`TOOL_NOT_EXECUTABLE`) from a missing file without parsing the message.
 */
export type ToolResult =
  | { readonly isError: false; readonly content: string }
  | { readonly isError: true; readonly content: string; readonly code: ToolErrorCode };

export function toolOk(content: string): ToolResult {
  return { isError: false, content };
}

export function toolError(code: ToolErrorCode, content: string): ToolResult {
  return { isError: true, code, content };
}

/**
 * A model mistake found deep inside a tool. Thrown there, turned into an error result by the
 * executor, so tool code can bail out from any depth without threading results through.
 */
export function toolFailure(code: ToolErrorCode, message: string, data?: ToolFailureData): ForkcacheError {
  return new ForkcacheError(code, message, data === undefined ? {} : { data });
}

/** True for failures that belong to the model (everything but a bad executor config). */
export function isToolFailure(err: unknown): err is ForkcacheError & { code: ToolErrorCode } {
  return err instanceof ForkcacheError && err.code.startsWith('TOOL_') && err.code !== 'TOOL_CONFIG_INVALID';
}

const ERRNO_MESSAGES: Readonly<Record<string, readonly [ToolErrorCode, string]>> = {
  ENOENT: ['TOOL_NOT_FOUND', 'no such file or directory'],
  ENOTDIR: ['TOOL_NOT_FOUND', 'a parent of the path is not a directory'],
  EISDIR: ['TOOL_IO_ERROR', 'is a directory'],
  EACCES: ['TOOL_IO_ERROR', 'permission denied'],
  EPERM: ['TOOL_IO_ERROR', 'operation not permitted'],
  ELOOP: ['TOOL_PATH_ESCAPE', 'is a symbolic link, which this tool does not follow'],
  EEXIST: ['TOOL_IO_ERROR', 'already exists'],
  ENOSPC: [
    'TOOL_IO_ERROR',
    "no space left: the workspace's disk is full (a fork's worktree may hold `maxWorkspaceMb` beyond its checkout); remove files or write less",
  ],
  EDQUOT: ['TOOL_IO_ERROR', 'the disk quota is used up; remove files or write less'],
  EROFS: ['TOOL_IO_ERROR', 'read-only file system'],
  ENAMETOOLONG: ['TOOL_IO_ERROR', 'the name is too long'],
  ENXIO: ['TOOL_IO_ERROR', 'is not a regular file'], // a FIFO with no reader, opened non-blocking
};

function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : undefined;
}

/**
 * Turn a Node fs error into a failure that names the path as the model wrote it. Node's own
 * messages carry absolute host paths, which the model has no use for. Anything that is not an
 * errno error (a bug) is returned unchanged, so the caller rethrows it.
 */
export function fromFsError(err: unknown, displayPath: string): unknown {
  if (err instanceof ForkcacheError) return err;
  const code = errnoCode(err);
  if (code === undefined) return err;
  const [toolCode, text] = ERRNO_MESSAGES[code] ?? ['TOOL_IO_ERROR', `failed (${code})`];
  return toolFailure(toolCode, `${displayPath}: ${text}`, { errno: code });
}
