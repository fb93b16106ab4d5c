import type { MessagesRequest } from '../types.ts';
import { declaredTools, type ToolExchange } from './conversation.ts';
import { countMatches, formatReport, wordPattern, type ReportFields } from './directive.ts';
import { isFirstPage, pagedRead } from './paged-read.ts';
import type { ScriptBlock, ScriptedTurn } from './types.ts';

/*
 * `rename <old> to <new> in <path>` as a fork child does it: read the file (page by page when
 * it is over the read limit), plan the edits, make them, re-read to verify, report. Stateless:
 * each turn the steps already taken are found again in the conversation.
 */

/** A write_file this long would not fit in the turn's output: edit the lines instead. */
const MAX_WRITE_CHARS = 16_000;
/** Line edits sent in one turn. */
const EDITS_PER_TURN = 20;
const MAX_CONFLICT_RETRIES = 3;

interface Call {
  name: string;
  input: Record<string, unknown>;
}

const calls = (list: readonly Call[]): ScriptedTurn => ({
  content: list.map((c): ScriptBlock => ({ type: 'tool_use', name: c.name, input: c.input })),
  stop_reason: 'tool_use',
});

const report = (fields: ReportFields): ScriptedTurn => ({
  content: [{ type: 'text', text: formatReport(fields) }],
  stop_reason: 'end_turn',
});

const firstLine = (text: string): string =>
  text
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim() ?? '';

function lastIndex(list: readonly ToolExchange[], test: (e: ToolExchange) => boolean, before = list.length): number {
  for (let i = Math.min(before, list.length) - 1; i >= 0; i--) if (test(list[i]!)) return i;
  return -1;
}

/**
 * A write to start over after, from a fresh read: the workspace refused it because a sibling
 * changed the file since it was read, or the run stopped while it ran and resume says its
 * effect is unknown (src/core/pool/resume-messages.ts: "check the current state before you repeat it").
 */
const isConflict = (e: ToolExchange): boolean =>
  e.result?.isError === true &&
  /changed by another fork or process since you last read it|its effect is unknown/.test(e.result.text);

/**
 * The edits that rename `from` to `to` in `content`: one `replace_all` when every occurrence
 * of the text is a whole identifier; otherwise the new file (small files) or one edit per
 * distinct line that holds the identifier (large ones), each line being unique as text.
 */
function planEdits(path: string, content: string, from: string, to: string, tools: Set<string>): Call[] | string {
  const word = wordPattern(from);
  const words = countMatches(content, word);
  const substrings = content.split(from).length - 1;
  if (tools.has('edit_file') && substrings === words)
    return [{ name: 'edit_file', input: { path, old_string: from, new_string: to, replace_all: true } }];
  if (tools.has('write_file') && (content.length <= MAX_WRITE_CHARS || !tools.has('edit_file')))
    return [{ name: 'write_file', input: { path, content: content.replace(word, to) } }];
  if (!tools.has('edit_file')) return 'neither edit_file nor write_file is declared';
  const lines = [...new Set(content.split('\n').filter((l) => countMatches(l, word) > 0))];
  const all = content.split('\n');
  for (const line of lines) {
    // the line's text must occur only as that whole line, or replacing it would touch others
    if (content.split(line).length - 1 !== all.filter((l) => l === line).length)
      return `cannot rename ${from} safely in ${path}: the text of the line ${JSON.stringify(line.slice(0, 80))} also occurs inside another line`;
  }
  return lines.map((line) => ({
    name: 'edit_file',
    input: { path, old_string: line, new_string: line.replace(word, to), replace_all: true },
  }));
}

export function renameTurn(
  request: Readonly<MessagesRequest>,
  all: ToolExchange[],
  from: string,
  to: string,
  path: string,
): ScriptedTurn {
  // After a conflict, start over from a fresh read (what a careful model does), a few times.
  const conflicts = all.filter(isConflict).length;
  const steps = conflicts > 0 && conflicts <= MAX_CONFLICT_RETRIES ? all.slice(lastIndex(all, isConflict) + 1) : all;
  const scope = `rename ${from} to ${to} in ${path}`;
  const tools = declaredTools(request);
  const fail = (issue: string, changed: string[] = []): ScriptedTurn =>
    report({ scope, result: 'not done', keyFiles: [path], filesChanged: changed, issues: [issue] });
  if (!tools.has('read_file')) return fail('the read_file tool is not declared');

  const isWrite = (e: ToolExchange): boolean =>
    (e.name === 'edit_file' || e.name === 'write_file') && e.input['path'] === path;
  const firstWrite = steps.findIndex(isWrite);
  const before = lastIndex(steps, (e) => isFirstPage(e, path), firstWrite < 0 ? steps.length : firstWrite);
  if (before < 0) return calls([{ name: 'read_file', input: { path } }]);
  const read = pagedRead(steps, before, path);
  if (read.kind === 'call') return calls([{ name: 'read_file', input: read.input }]);
  if (read.kind === 'error') return fail(`read_file failed: ${firstLine(read.text)}`);
  const renamed = countMatches(read.text, wordPattern(from));
  if (renamed === 0 && firstWrite < 0)
    return report({
      scope,
      result: `no occurrences of ${from} in ${path}; nothing to change`,
      keyFiles: [path],
      filesChanged: [],
      issues: [],
    });

  const plan = planEdits(path, read.text, from, to, tools);
  if (typeof plan === 'string') return fail(plan);
  const writes = steps.slice(read.last + 1).filter(isWrite);
  const failed = writes.find((w) => w.result?.isError);
  if (failed) return fail(`${failed.name} failed: ${firstLine(failed.result!.text)}`, writes.length > 1 ? [path] : []);
  if (writes.length < plan.length) return calls(plan.slice(writes.length, writes.length + EDITS_PER_TURN));

  const lastWrite = lastIndex(steps, isWrite);
  const verifyAt = steps.findIndex((e, i) => i > lastWrite && isFirstPage(e, path));
  if (verifyAt < 0) return calls([{ name: 'read_file', input: { path } }]);
  const verify = pagedRead(steps, verifyAt, path);
  if (verify.kind === 'call') return calls([{ name: 'read_file', input: verify.input }]);
  if (verify.kind === 'error') return fail(`could not re-read ${path} to verify: ${firstLine(verify.text)}`, [path]);
  const remaining = countMatches(verify.text, wordPattern(from));
  if (remaining > 0) return fail(`${remaining} occurrence(s) of ${from} remain in ${path} after the edit`, [path]);
  const how = plan.length === 1 ? plan[0]!.name : `${plan.length} edits`;
  const paged = read.pages > 1 ? `, read in ${read.pages} parts` : '';
  return report({
    scope,
    result: `renamed ${renamed} occurrence(s) of ${from} to ${to} in ${path} (${how}${paged}), verified by re-reading`,
    keyFiles: [path],
    filesChanged: [path],
    issues: [],
  });
}
