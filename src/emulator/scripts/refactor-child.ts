import type { MessagesRequest } from '../types.ts';
import { declaredTools, toolExchanges, type ToolExchange } from './conversation.ts';
import { countMatches, formatReport, parseDirective, wordPattern, type ReportFields } from './directive.ts';
import type { ScriptedTurn } from './types.ts';

/*
 * The refactor model as a fork child. Stateless: each request, it re-reads the calls it already
 * made after the directive and their results, and decides the next step — one tool call per
 * turn, no text between calls, one report at the end (the fork rules).
 */

const call = (name: string, input: Record<string, unknown>): ScriptedTurn => ({
  content: [{ type: 'tool_use', name, input }],
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

function lastIndex(list: readonly ToolExchange[], test: (e: ToolExchange) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i]!)) return i;
  return -1;
}

/** A write the workspace refused because a sibling changed the file since it was read. */
const isConflict = (e: ToolExchange): boolean =>
  e.result?.isError === true && /changed by another fork or process since you last read it/.test(e.result.text);
const MAX_CONFLICT_RETRIES = 3;

function rename(
  request: Readonly<MessagesRequest>,
  all: ToolExchange[],
  from: string,
  to: string,
  path: string,
): ScriptedTurn {
  // After a conflict, start over from a fresh read (what a careful model does), a few times.
  const conflicts = all.filter(isConflict).length;
  const calls = conflicts > 0 && conflicts <= MAX_CONFLICT_RETRIES ? all.slice(lastIndex(all, isConflict) + 1) : all;
  const scope = `rename ${from} to ${to} in ${path}`;
  const tools = declaredTools(request);
  const isRead = (e: ToolExchange): boolean => e.name === 'read_file' && e.input['path'] === path;
  const editAt = lastIndex(
    calls,
    (e) => (e.name === 'edit_file' || e.name === 'write_file') && e.input['path'] === path,
  );
  const fail = (issue: string, changed: string[] = []): ScriptedTurn =>
    report({ scope, result: 'not done', keyFiles: [path], filesChanged: changed, issues: [issue] });

  const before = calls[lastIndex(editAt < 0 ? calls : calls.slice(0, editAt), isRead)];
  if (editAt < 0) {
    if (!tools.has('read_file')) return fail('the read_file tool is not declared');
    if (!before) return call('read_file', { path });
    if (before.result?.isError) return fail(`read_file failed: ${firstLine(before.result.text)}`);
    const content = before.result?.text ?? '';
    const words = countMatches(content, wordPattern(from));
    if (words === 0)
      return report({
        scope,
        result: `no occurrences of ${from} in ${path}; nothing to change`,
        keyFiles: [path],
        filesChanged: [],
        issues: [],
      });
    const substrings = content.split(from).length - 1;
    // replace_all is only safe when every occurrence is a whole identifier; otherwise rewrite the
    // file with a word-boundary replacement (renaming `foo` must not touch `foobar`).
    if (tools.has('edit_file') && (substrings === words || !tools.has('write_file'))) {
      return call('edit_file', { path, old_string: from, new_string: to, replace_all: true });
    }
    if (tools.has('write_file')) return call('write_file', { path, content: content.replace(wordPattern(from), to) });
    return fail('neither edit_file nor write_file is declared');
  }

  const edit = calls[editAt]!;
  if (edit.result?.isError) return fail(`${edit.name} failed: ${firstLine(edit.result.text)}`);
  const renamed = before ? countMatches(before.result?.text ?? '', wordPattern(from)) : 0;
  const verify = calls
    .slice(editAt + 1)
    .filter(isRead)
    .pop();
  if (!verify) return call('read_file', { path });
  if (verify.result?.isError)
    return fail(`could not re-read ${path} to verify: ${firstLine(verify.result.text)}`, [path]);
  const remaining = countMatches(verify.result?.text ?? '', wordPattern(from));
  return report({
    scope,
    result: `renamed ${renamed} occurrence(s) of ${from} to ${to} in ${path} (${edit.name}), verified by re-reading`,
    keyFiles: [path],
    filesChanged: [path],
    issues: remaining === 0 ? [] : [`${remaining} occurrence(s) of ${from} remain in ${path}`],
  });
}

function read(calls: ToolExchange[], path: string, hasRead: boolean): ScriptedTurn {
  const scope = `read ${path} and report`;
  const done = calls.filter((e) => e.name === 'read_file' && e.input['path'] === path).pop();
  if (!done) {
    if (!hasRead)
      return report({
        scope,
        result: 'not done',
        keyFiles: [path],
        filesChanged: [],
        issues: ['the read_file tool is not declared'],
      });
    return call('read_file', { path });
  }
  const text = done.result?.text ?? '';
  if (done.result?.isError)
    return report({
      scope,
      result: 'not done',
      keyFiles: [path],
      filesChanged: [],
      issues: [`read_file failed: ${firstLine(text)}`],
    });
  const lines = text === '' ? 0 : text.replace(/\n$/, '').split('\n').length;
  return report({
    scope,
    result: `${path} has ${lines} line(s) and ${text.length} character(s); first line: ${JSON.stringify(firstLine(text))}`,
    keyFiles: [path],
    filesChanged: [],
    issues: [],
  });
}

function runCommand(calls: ToolExchange[], command: string, hasBash: boolean): ScriptedTurn {
  const scope = `run \`${command}\` and report`;
  const done = calls.filter((e) => e.name === 'bash').pop();
  if (!done) {
    if (!hasBash)
      return report({
        scope,
        result: 'not done',
        keyFiles: [],
        filesChanged: [],
        issues: ['the bash tool is not declared'],
      });
    return call('bash', { command });
  }
  const text = done.result?.text ?? '';
  if (done.result?.isError)
    return report({
      scope,
      result: 'not done',
      keyFiles: [],
      filesChanged: [],
      issues: [`bash failed: ${firstLine(text)}`],
    });
  return report({
    scope,
    result: `the command printed ${JSON.stringify(firstLine(text))}`,
    keyFiles: [],
    filesChanged: [],
    issues: [],
  });
}

/** The next turn of a fork child carrying out `directive` (given in message `from`). */
export function childTurn(request: Readonly<MessagesRequest>, directive: string, from: number): ScriptedTurn {
  const calls = toolExchanges(request.messages, from);
  const parsed = parseDirective(directive);
  switch (parsed.kind) {
    case 'rename-in':
      return rename(request, calls, parsed.from, parsed.to, parsed.path);
    case 'read':
      return read(calls, parsed.path, declaredTools(request).has('read_file'));
    case 'run':
      return runCommand(calls, parsed.command, declaredTools(request).has('bash'));
    case 'rename-across':
      return report({
        scope: directive,
        result: 'not done',
        keyFiles: [],
        filesChanged: [],
        issues: ['a fork cannot fan out; give it one file: rename <old> to <new> in <path>'],
      });
    case 'unknown':
      return report({
        scope: parsed.text || '(empty directive)',
        result: 'not done',
        keyFiles: [],
        filesChanged: [],
        issues: ['unknown directive'],
      });
  }
}
