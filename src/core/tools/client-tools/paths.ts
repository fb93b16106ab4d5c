import path from 'node:path';
import type { ToolContext } from '../context.ts';
import type { ClientToolIo } from './types.ts';

/**
 * Claude Code and Qwen Code write absolute paths in the session's working directory. Those
 * under `clientRoot` become workspace-relative (the fork's worktree under worktree isolation);
 * every other path goes to the jail as written, which refuses one outside the workspace
 * (`/etc/passwd`, `../x`) and the protected directories, as for forkcache's own tools.
 */
export function clientPaths(ctx: ToolContext, clientRoot: string | undefined): ClientToolIo {
  const root = clientRoot === undefined ? undefined : path.resolve(clientRoot);
  return {
    ctx,
    path(given) {
      if (root === undefined || !path.isAbsolute(given)) return given;
      const abs = path.resolve(given);
      if (abs === root) return '.';
      return abs.startsWith(`${root}${path.sep}`) ? path.relative(root, abs) : given;
    },
    shown(relative) {
      // a path `path()` left as given (absolute elsewhere, or `..` out of the workspace) is shown
      // as given: under the session's directory it would name a file it is not
      if (root === undefined || path.isAbsolute(relative) || relative === '..' || relative.startsWith(`..${path.sep}`))
        return relative;
      return path.join(root, relative);
    },
  };
}
