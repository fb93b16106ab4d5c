import { lstat, realpath } from 'node:fs/promises';
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { ForkcacheError } from '../../util/errors.ts';
import { isInside, ProtectedPaths } from './protected-paths.ts';
import { fromFsError, toolFailure } from '../result.ts';

/** A path the jail let through. */
interface JailedPath {
  /** Absolute, symlink-free path inside the workspace: the only path handed to `fs`. */
  readonly real: string;
  /** `real` relative to the workspace root, with `/` separators (`''` for the root). */
  readonly relative: string;
  /** False when the path does not exist yet (only possible in `create` mode). */
  readonly exists: boolean;
}

/** `existing`: the path must exist. `create`: it may be missing, its existing part is checked. */
type JailMode = 'existing' | 'create';

/** Where tools may go: a root, and inside it what is not protected (checked again on every open fd). */
export interface PathScope {
  readonly root: string;
  /** Why `real` (an absolute realpath) may not be touched, or undefined when it may. */
  refusal(real: string): string | undefined;
}

function toPosix(rel: string): string {
  return path.sep === '/' ? rel : rel.split(path.sep).join('/');
}

/**
 * The workspace jail. Every path a tool touches goes through `resolve`, which refuses anything
 * whose real location (after `..` and every symlink) is outside the workspace's realpath.
 *
 * Tools then use `real`, never the model's string: the kernel never sees a `link/..` the jail
 * did not resolve itself. What remains is a race with a concurrent process that swaps a
 * checked directory for a symlink: files are opened with O_NOFOLLOW and then checked inside
 * the root through their open fd, and writes go through an open, checked directory
 * (file-io.ts, dir-handle.ts), so the race cannot lead outside.
 */
export class WorkspaceJail implements PathScope {
  /** The workspace realpath (tmpdirs are often reached through a symlink, e.g. on macOS). */
  readonly root: string;
  readonly #given: string;
  /** `.git` and forkcache's own directories (protected-paths.ts). */
  readonly protected: ProtectedPaths;

  /**
   * Throws TOOL_CONFIG_INVALID when the workspace is not an existing directory. `protect`:
   * directories no tool may reach even inside the workspace (the run directory, the state dir).
   */
  constructor(workspace: string, protect: readonly string[] = []) {
    this.protected = new ProtectedPaths(protect);
    this.#given = path.resolve(workspace);
    let root: string;
    try {
      root = realpathSync(this.#given);
    } catch (err) {
      throw new ForkcacheError('TOOL_CONFIG_INVALID', `workspace ${workspace} does not exist`, { cause: err });
    }
    if (!statSync(root).isDirectory()) {
      throw new ForkcacheError('TOOL_CONFIG_INVALID', `workspace ${workspace} is not a directory`);
    }
    this.root = root;
  }

  /**
   * Resolve a path the model gave, relative to the workspace root, or refuse it
   * (TOOL_PATH_ESCAPE, TOOL_INPUT_INVALID, TOOL_NOT_FOUND for a missing path in `existing` mode).
   */
  async resolve(input: string, mode: JailMode): Promise<JailedPath> {
    const lexical = this.#lexical(input);
    const real = await this.#realOrMissing(lexical, input, 0);
    if (!isInside(this.root, real.path))
      throw escape(input, 'resolves (through a symbolic link) outside the workspace');
    const refused = this.protected.reason(this.root, real.path);
    if (refused !== undefined) throw toolFailure('TOOL_PATH_PROTECTED', `${input} ${refused}`);
    if (!real.exists && mode === 'existing') throw toolFailure('TOOL_NOT_FOUND', `${input}: no such file or directory`);
    return { real: real.path, relative: toPosix(path.relative(this.root, real.path)), exists: real.exists };
  }

  refusal(real: string): string | undefined {
    if (!isInside(this.root, real)) return 'is outside the workspace';
    return this.protected.reason(this.root, real);
  }

  /** Resolve `..` and `.` as text, inside the root; absolute paths under the workspace are fine. */
  #lexical(input: string): string {
    if (input.includes('\0')) throw toolFailure('TOOL_INPUT_INVALID', 'the path contains a NUL byte');
    let abs = path.resolve(this.root, input);
    // An absolute path written against the workspace as it was named (before realpath).
    if (path.isAbsolute(input) && !isInside(this.root, abs) && isInside(this.#given, abs)) {
      abs = path.join(this.root, path.relative(this.#given, abs));
    }
    if (!isInside(this.root, abs)) throw escape(input, 'is outside the workspace');
    return abs;
  }

  /**
   * realpath of `abs`, or of its deepest existing ancestor plus the missing tail. A component
   * that exists as a symlink to nowhere is refused: writing through it would create its
   * target, which may be anywhere.
   */
  async #realOrMissing(abs: string, input: string, depth: number): Promise<{ path: string; exists: boolean }> {
    try {
      return { path: await realpath(abs), exists: true };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'ELOOP') throw escape(input, 'goes through a symbolic link loop');
      if (code !== 'ENOENT') throw fromFsError(err, input);
    }
    const entry = await lstatOf(abs);
    if (entry?.isSymbolicLink() === true)
      throw escape(input, 'goes through a symbolic link whose target does not exist');
    // made between the realpath and now (another call's mkdir or write): resolve it again
    if (entry !== undefined && depth <= 4096) return this.#realOrMissing(abs, input, depth + 1);
    const parent = path.dirname(abs);
    // The root exists (checked at construction), so the walk up ends there at the latest.
    if (parent === abs || depth > 4096) throw toolFailure('TOOL_NOT_FOUND', `${input}: no such file or directory`);
    const up = await this.#realOrMissing(parent, input, depth + 1);
    return { path: path.join(up.path, path.basename(abs)), exists: false };
  }
}

/** The entry at `abs` itself (a link not followed), or undefined when there is none. */
async function lstatOf(abs: string): Promise<Awaited<ReturnType<typeof lstat>> | undefined> {
  try {
    return await lstat(abs);
  } catch {
    return undefined;
  }
}

function escape(input: string, why: string): ForkcacheError {
  return toolFailure('TOOL_PATH_ESCAPE', `${input} ${why}; tools only reach files inside the workspace`);
}
