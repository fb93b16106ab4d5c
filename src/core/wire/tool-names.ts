import { SPAWN_TOOL_NAME } from './fork-text.ts';

/**
 * Every tool forkcache declares, in declaration order. The order is part of the cached prefix
 * (the tool array comes before the messages), so it never changes: append, never reorder.
 */
export const TOOL_NAMES = [
  'read_file',
  'list_dir',
  'grep',
  'glob',
  'edit_file',
  'write_file',
  'bash',
  SPAWN_TOOL_NAME,
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

/** Tools the executor can run. The spawn tool is declared but executed by the engine. */
export type ExecutableToolName = Exclude<ToolName, typeof SPAWN_TOOL_NAME>;

/** The workspace file tools: what a fork may run when no allowlist is given. */
export const FILE_TOOL_NAMES = [
  'read_file',
  'list_dir',
  'grep',
  'glob',
  'edit_file',
  'write_file',
] as const satisfies readonly ExecutableToolName[];

/**
 * Tools that only read the workspace: one interrupted by a stop is simply run again on resume
 * (nothing it did can have changed anything), unlike one with effects (edit, write, bash).
 */
export const READ_ONLY_TOOL_NAMES = [
  'read_file',
  'list_dir',
  'grep',
  'glob',
] as const satisfies readonly ExecutableToolName[];

export const EXECUTABLE_TOOL_NAMES = [...FILE_TOOL_NAMES, 'bash'] as const satisfies readonly ExecutableToolName[];
