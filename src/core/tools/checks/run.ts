import { isForkcacheError } from '../../util/errors.ts';
import { runBash } from '../sandbox/bash.ts';
import type { ToolContext } from '../context.ts';
import { openRegularFile, readAll } from '../jail/file-io.ts';
import { checkFileText, parseCheckFileArgs } from './file-check.ts';

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
 * environment, process group, timeout and output caps: src/core/tools/sandbox/bash.ts), and report its exit
 * code instead of turning a failure into a tool error. The workspace is the fork's, so the
 * command is as untrusted as anything the fork wrote there.
 */
export async function runCheck(command: string, ctx: ToolContext): Promise<CheckResult> {
  const words = checkFileWords(command);
  if (words) return runCheckFile(words, ctx);
  try {
    const output = await runBash({ command }, ctx);
    // bash's placeholder for a silent command, which a check's record need not repeat
    return { exitCode: 0, timedOut: false, output: output === '(no output)' ? '' : output };
  } catch (err) {
    if (!isForkcacheError(err) || err.code !== 'TOOL_COMMAND_FAILED') throw err;
    // bash's failure message is one status line, then the output
    const newline = err.message.indexOf('\n');
    const output = newline < 0 ? '' : err.message.slice(newline + 1);
    const code = err.data?.exitCode;
    if (typeof code === 'number' || code === null) return { exitCode: code, timedOut: false, output };
    return { exitCode: null, timedOut: /timed out/.test(err.message.slice(0, newline)), output };
  }
}

/**
 * The words of a check that is exactly `forkcache check-file …` (bare words and the single
 * quotes `substituteCheck` writes, nothing else), or undefined for any other command. Such a
 * check runs here, in the fork's thread, instead of in bash: the sandbox shows only the system's
 * directories, where a forkcache installed in a project (and its parser package) is not, and a
 * parse needs no process. Hand-written because it is only the inverse of `shellQuote`: any other
 * shell syntax (`&&`, `$`, `"`) is a command for bash.
 */
export function checkFileWords(command: string): string[] | undefined {
  const words: string[] = [];
  const word = /\s*((?:[A-Za-z0-9_@%+=:,./-]+|'[^']*'|\\')+)(?=\s|$)/y;
  let rest = command.trim();
  while (rest !== '') {
    word.lastIndex = 0;
    const m = word.exec(rest);
    if (!m) return undefined;
    words.push(m[1]!.replace(/'([^']*)'|\\'/g, (q: string, inner: string | undefined) => (q === "\\'" ? "'" : inner!)));
    rest = rest.slice(m[0].length).trim();
  }
  return words[0] === 'forkcache' && words[1] === 'check-file' ? words.slice(2) : undefined;
}

/** `forkcache check-file` in the fork's thread: the file read through the jail, the verdict as a check's output. */
async function runCheckFile(words: readonly string[], ctx: ToolContext): Promise<CheckResult> {
  let lines: string[];
  let ok: boolean;
  try {
    const spec = parseCheckFileArgs(words);
    const { real } = await ctx.jail.resolve(spec.file, 'existing');
    const file = await openRegularFile(real, spec.file, ctx.jail);
    let text: string;
    try {
      text = (await readAll(file, ctx.signal)).toString('utf8');
    } finally {
      await file.handle.close();
    }
    const verdict = await checkFileText(spec, text);
    ok = verdict.ok;
    lines = [...verdict.problems, ...verdict.notes.map((n) => `note: ${n}`)];
  } catch (err) {
    if (!isForkcacheError(err)) throw err;
    ok = false;
    lines = [`forkcache check-file: ${err.message}`];
  }
  return { exitCode: ok ? 0 : 1, timedOut: false, output: lines.join('\n') };
}
