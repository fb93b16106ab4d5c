import type { MessagesRequest } from '../types.ts';
import { CHECK_FAILED_TAG, FORK_FIXUP_TAG, FORK_RETRY_TAG } from '../../../core/wire/fork-text.ts';
import { declaredTools, lastUserText, toolExchanges, type ToolExchange } from './conversation.ts';
import { formatReport, parseDirective, type ReportFields } from './directive.ts';
import { isFirstPage, pagedRead, runAgain } from './paged-read.ts';
import { fixupTurn } from './refactor-fixup.ts';
import { renameTurn } from './refactor-rename.ts';
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

/** A user turn the fork loop adds to start the work again (src/core/loop/prompts.ts). */
const isRestart = (text: string): boolean =>
  text.startsWith(`<${CHECK_FAILED_TAG}>`) ||
  text.startsWith(`<${FORK_RETRY_TAG}>`) ||
  text.startsWith(`<${FORK_FIXUP_TAG}>`);

const firstLine = (text: string): string =>
  text
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim() ?? '';

function read(calls: ToolExchange[], path: string, hasRead: boolean): ScriptedTurn {
  const scope = `read ${path} and report`;
  const first = calls.findLastIndex((e) => isFirstPage(e, path));
  if (first < 0) {
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
  // a file over the read limit is read on, part by part, to its end
  const done = pagedRead(calls, first, path);
  if (done.kind === 'call') return call('read_file', done.input);
  if (done.kind === 'error')
    return report({
      scope,
      result: 'not done',
      keyFiles: [path],
      filesChanged: [],
      issues: [`read_file failed: ${firstLine(done.text)}`],
    });
  const text = done.text;
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
  if (runAgain(calls, done)) return call('bash', { command });
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
  // a failed check's output or a retry restarts the work from the current files
  const restart = lastUserText(request.messages, isRestart);
  const calls = toolExchanges(request.messages, Math.max(from, restart?.message ?? -1));
  const parsed = parseDirective(directive);
  switch (parsed.kind) {
    case 'rename-in':
      if (restart?.text.startsWith(`<${FORK_FIXUP_TAG}>`)) {
        const fixup = fixupTurn(calls, parsed, restart.text);
        if (fixup) return fixup;
      }
      return renameTurn(request, calls, parsed.from, parsed.to, parsed.path);
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
