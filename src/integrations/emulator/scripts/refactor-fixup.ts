import type { ToolExchange } from './conversation.ts';
import { escapeRegExp, formatReport } from './directive.ts';
import type { ScriptedTurn } from './types.ts';

/*
 * A rename fork's fix-up turn, as the `refactor` model takes it: the integration check failed
 * on the merged repository and named this fork's file. A whole-word rename goes too far where
 * another package has a member of the same name (`exec.Command` became `exec.CobraCommand`),
 * and a compiler says so: `undefined: exec.CobraCommand`. The model puts each such qualified
 * name back, then reports. Output that names no such thing is not the model's to fix: the
 * work restarts as after a retry (which, for a rename already done, changes nothing).
 */

const call = (name: string, input: Record<string, unknown>): ScriptedTurn => ({
  content: [{ type: 'tool_use', name, input }],
  stop_reason: 'tool_use',
});

/** The qualifiers (`exec`) of every `undefined: <qualifier>.<to>` the output reports. */
function overRenamed(output: string, to: string): string[] {
  const pattern = new RegExp(`undefined: ([A-Za-z_][A-Za-z0-9_]*)\\.${escapeRegExp(to)}(?![A-Za-z0-9_])`, 'g');
  return [...new Set([...output.matchAll(pattern)].map((m) => m[1]!))];
}

/**
 * The next turn of a fix-up of `rename <from> to <to> in <path>`; `calls` are the tool calls
 * made since the fix-up prompt. Undefined when the output names nothing to put back.
 */
export function fixupTurn(
  calls: readonly ToolExchange[],
  rename: { from: string; to: string; path: string },
  output: string,
): ScriptedTurn | undefined {
  const { from, to, path } = rename;
  const qualifiers = overRenamed(output, to);
  if (qualifiers.length === 0) return undefined;
  if (!calls.some((e) => e.name === 'read_file' && e.input['path'] === path)) return call('read_file', { path });
  const edits = calls.filter((e) => e.name === 'edit_file' && e.input['path'] === path);
  const failed = edits.find((e) => e.result?.isError);
  if (!failed && edits.length < qualifiers.length) {
    const q = qualifiers[edits.length]!;
    return call('edit_file', { path, old_string: `${q}.${to}`, new_string: `${q}.${from}`, replace_all: true });
  }
  const names = qualifiers.map((q) => `${q}.${from}`).join(', ');
  return {
    content: [
      {
        type: 'text',
        text: formatReport({
          scope: `rename ${from} to ${to} in ${path}`,
          result: failed
            ? 'not done'
            : `put back ${names}: members of other packages the rename had changed; the rest of the rename stands`,
          keyFiles: [path],
          filesChanged: edits.length > 0 ? [path] : [],
          issues: failed ? [`edit_file failed: ${failed.result?.text.split('\n')[0] ?? ''}`] : [],
        }),
      },
    ],
    stop_reason: 'end_turn',
  };
}
