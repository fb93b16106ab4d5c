import type { z } from 'zod';
import type { ToolContext } from '../context.ts';
import type { ExecutableToolName } from '../../wire/tool-names.ts';
import type { RUN } from './handler.ts';

/** The tool sets a fork can run: forkcache's own, or a client's whose array the parent declares. */
export const TOOL_SET_NAMES = ['forkcache', 'claude-code', 'qwen-code'] as const;
export type ToolSetName = (typeof TOOL_SET_NAMES)[number];

/** `auto`: the set is chosen from the parent's declared array (registry.ts). */
export type ToolSetChoice = ToolSetName | 'auto';

/** What a client tool's implementation gets besides its parsed input. */
export interface ClientToolIo {
  readonly ctx: ToolContext;
  /**
   * The workspace-relative path of a path the model wrote: an absolute path under the client's
   * working directory (or the workspace) becomes relative; any other absolute path is refused
   * like `../x` (TOOL_PATH_ESCAPE), before a file is touched.
   */
  path(given: string): string;
  /** A workspace-relative path as the client writes paths: absolute under its working directory, when known. */
  shown(relative: string): string;
}

/**
 * One tool of a client, run by forkcache's own executors. `capability` is the forkcache tool
 * whose permission it needs: `allow`, `permissions` and the protected paths speak of that
 * (allowing `bash` allows Claude Code's `Bash`), so a policy never depends on a client's names.
 */
export interface ClientTool {
  readonly name: string;
  readonly capability: ExecutableToolName;
  /** True when the tool only reads: an interrupted call is run again on resume. */
  readonly readOnly: boolean;
  readonly input: z.ZodType;
  /** The handler: only the gate calls it (handler.ts). */
  [RUN](input: never, io: ClientToolIo): Promise<string>;
}

/** A client's tool set: the tools forkcache runs, and the ones a fork is refused on purpose. */
export interface ToolSet {
  readonly name: ToolSetName;
  readonly tools: ReadonlyMap<string, ClientTool>;
  /** The spawn tools (the client's Agent): refused inside a fork by the recursion guard. */
  readonly spawn: readonly string[];
  /** Tool name → what the model is told to do instead, for tools no fork should run. */
  readonly refused: Readonly<Record<string, string>>;
  /**
   * The client's way to reach tools it did not declare (Qwen Code's `tool_call` and
   * `tool_search`): `call` runs `{ name, arguments }` as that tool; `search` describes them.
   */
  readonly deferred?: { readonly call: string; readonly search: string } | undefined;
  /** The client's working directory, as its system prompt states it (its absolute paths' root). */
  clientRoot(texts: readonly string[]): string | undefined;
}
