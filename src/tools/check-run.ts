import { isForkcacheError } from '../errors.ts';
import { runBash } from './bash.ts';
import type { ToolContext } from './context.ts';

/** What a check command did: its exit code (null: killed), whether it timed out, its output. */
export interface CheckResult {
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** stdout, then `[stderr]` and stderr, each capped like bash's output. */
  readonly output: string;
  /**
   * What the checks so far created in the workspace and the fork has not changed since
   * (workspace-relative, `dir/` for a directory): only when asked (`trackOutputs`), and not empty.
   */
  readonly outputs?: readonly string[] | undefined;
}

/**
 * Run a plan's check command exactly as the `bash` tool runs a command (the same sandbox,
 * environment, process group, timeout and output caps: src/tools/bash.ts), and report its exit
 * code instead of turning a failure into a tool error. The workspace is the fork's, so the
 * command is as untrusted as anything the fork wrote there.
 */
export async function runCheck(command: string, ctx: ToolContext): Promise<CheckResult> {
  try {
    const output = await runBash({ command }, ctx);
    // bash's placeholder for a silent command, which a check's record need not repeat
    return { exitCode: 0, timedOut: false, output: output === '(no output)' ? '' : output };
  } catch (err) {
    if (!isForkcacheError(err) || err.code !== 'TOOL_COMMAND_FAILED') throw err;
    // bash's failure message is one status line, then the output
    const newline = err.message.indexOf('\n');
    const output = newline < 0 ? '' : err.message.slice(newline + 1);
    const code = err.data['exitCode'];
    if (typeof code === 'number' || code === null) return { exitCode: code, timedOut: false, output };
    return { exitCode: null, timedOut: /timed out/.test(err.message.slice(0, newline)), output };
  }
}
