import { z } from 'zod';

/** Size and count limits of the tools. Every field is overridable per executor. */
export interface ToolLimits {
  /** Most bytes one read_file call returns; a larger file must be read with offset/limit. */
  readonly maxReadBytes: number;
  /** Largest file edit_file will load and rewrite. */
  readonly maxEditBytes: number;
  /** grep skips files larger than this. */
  readonly maxGrepFileBytes: number;
  /** grep stops after this many matching lines and says so. */
  readonly maxGrepMatches: number;
  /** A grep line longer than this is cut (minified files would flood the context). */
  readonly maxLineChars: number;
  /** glob stops after this many paths and says so. */
  readonly maxGlobResults: number;
  /** list_dir shows at most this many entries. */
  readonly maxListEntries: number;
  /** glob and grep stop walking after visiting this many entries (a huge tree, node_modules). */
  readonly maxWalkEntries: number;
  /** Deadline of every other tool call (grep over a huge tree, a slow disk): then TOOL_TIMEOUT. */
  readonly toolTimeoutMs: number;
  /** bash is killed after this long. */
  readonly bashTimeoutMs: number;
  /** Most bytes of stdout (and of stderr) bash returns. */
  readonly maxBashOutputBytes: number;
  /** In the bubblewrap sandbox: tasks (processes and threads) one command may run at once. */
  readonly bashMaxProcesses: number;
  /** In the bubblewrap sandbox: writable memory of one process (RLIMIT_DATA: heap and mmap), MiB. */
  readonly bashMaxMemoryMb: number;
  /** In the bubblewrap sandbox: the largest file a command may write, anywhere (RLIMIT_FSIZE), MiB. */
  readonly bashMaxFileMb: number;
  /** In the bubblewrap sandbox: size of the command's private /tmp (host memory), MiB. */
  readonly bashTmpMb: number;
  /**
   * A fork's own worktree (`isolation: 'worktree'`): the most disk its files may take beyond
   * the checkout, by bash and the file tools alike (a file system of its own, as root), MiB.
   */
  readonly maxWorkspaceMb: number;
}

export const DEFAULT_TOOL_LIMITS: Readonly<ToolLimits> = Object.freeze({
  maxReadBytes: 256 * 1024,
  maxEditBytes: 1024 * 1024,
  maxGrepFileBytes: 1024 * 1024,
  maxGrepMatches: 200,
  maxLineChars: 500,
  maxGlobResults: 1000,
  maxListEntries: 1000,
  maxWalkEntries: 50_000,
  toolTimeoutMs: 60_000,
  bashTimeoutMs: 30_000,
  maxBashOutputBytes: 64 * 1024,
  bashMaxProcesses: 512,
  bashMaxMemoryMb: 4096,
  bashMaxFileMb: 1024,
  bashTmpMb: 512,
  maxWorkspaceMb: 4096,
});

/** Bytes inspected for a NUL byte to decide that a file is binary (what git and grep do). */
export const BINARY_SNIFF_BYTES = 8 * 1024;

const limit = z.number().int().positive();

/**
 * The largest `maxWorkspaceMb` a host can honour (4 TiB): the worktree's disk is an image file of
 * that size (sparse: what it costs is what the fork writes), and ext4 with 4 KiB blocks, the
 * smallest limit of the common file systems, holds no file over 16 TiB. Past it the image
 * cannot be made (EFBIG, or ERR_OUT_OF_RANGE past 2^53 bytes), so it is refused as input.
 */
export const MAX_WORKSPACE_MB = 4 * 1024 * 1024;

export const workspaceMbSchema = limit.max(
  MAX_WORKSPACE_MB,
  `at most ${MAX_WORKSPACE_MB} MB (4 TiB): the worktree's disk image cannot be larger`,
);

export const toolLimitsSchema = z
  .strictObject({
    maxReadBytes: limit,
    maxEditBytes: limit,
    maxGrepFileBytes: limit,
    maxGrepMatches: limit,
    maxLineChars: limit,
    maxGlobResults: limit,
    maxListEntries: limit,
    maxWalkEntries: limit,
    toolTimeoutMs: limit,
    bashTimeoutMs: limit,
    maxBashOutputBytes: limit,
    bashMaxProcesses: limit,
    bashMaxMemoryMb: limit,
    bashMaxFileMb: limit,
    bashTmpMb: limit,
    maxWorkspaceMb: workspaceMbSchema,
  })
  .partial();
