import { z } from 'zod';

/** The most directives one call may carry: well past Claude Code's 20 subagents, bounded so one call cannot queue without end. */
export const MAX_DIRECTIVES = 1000;

/**
 * The `fork` tool's input, as an MCP client sees it (its JSON schema is generated from this).
 * Nothing is transformed: the arguments must still equal the model's call when they reach the
 * proxy's record of it.
 */
export const forkInputShape = {
  directives: z
    .array(z.string().refine((d) => d.trim() !== '', 'a directive must not be empty'))
    .min(1, 'expected at least one directive')
    .max(MAX_DIRECTIVES, `at most ${MAX_DIRECTIVES} directives in one call`)
    .describe('One task per child. Each child starts from this conversation exactly as it is now.'),
  isolation: z
    .enum(['none', 'worktree'])
    .optional()
    .describe('worktree: each child works on its own git branch (the workspace must be a git repository)'),
  check: z
    .string()
    .min(1)
    .optional()
    .describe("A shell command run in each child's workspace when it reports done; its failure goes back to the child"),
  maxUsd: z.number().positive().max(1_000_000).optional().describe('Stop admitting requests past this spend (USD)'),
  background: z.boolean().optional().describe('Return a run id at once; read the reports later with fork_status'),
  bash: z
    .boolean()
    .optional()
    .describe(
      "Let the children run the shell tool, in forkcache's sandbox (no network, the workspace only); default: as the server allows (forkcache proxy --mcp-allow-bash)",
    ),
  outputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "A JSON Schema each child's result must match: each reports one JSON value, checked (one repair turn, then status invalid_output) and returned as its output",
    ),
};

export const forkInput = z.strictObject(forkInputShape);
export type ForkInput = z.infer<typeof forkInput>;

export const statusInputShape = {
  runId: z.string().min(1).describe('The run id a background fork call returned'),
};
