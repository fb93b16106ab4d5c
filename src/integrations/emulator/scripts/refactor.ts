import { clientChildTurn, clientShapesOf } from './client-child.ts';
import { findForkDirective, lastUserText, toolExchanges } from './conversation.ts';
import { formatReport, parseDirective } from './directive.ts';
import { childTurn } from './refactor-child.ts';
import { parentRenameTurn } from './refactor-parent.ts';
import type { ScriptedModel, ScriptedTurn } from './types.ts';

/**
 * `refactor`: a deterministic, rule-based agent for the directive language of `directive.ts`.
 * It uses the fork tools (read_file, edit_file, write_file, grep, agent) the way a real model
 * would, one step per request, deriving each step from the conversation so far.
 *
 * - A fork child (a user text with the `<fork-boilerplate>` tag) carries out its
 *   `Directive: …` (with Claude Code's or Qwen Code's tools when the request declares those,
 *   client-child.ts) and ends with a `Scope:/Result:/Key files:/Files changed:/Issues:` report.
 * - A parent given `rename <old> to <new> across <dir>` greps, spawns one fork per file with
 *   the `agent` tool, then summarises; given a one-file directive it does the work itself.
 */
export const refactorModel: ScriptedModel = {
  name: 'refactor',
  respond({ request }): ScriptedTurn {
    const fork = findForkDirective(request.messages);
    if (fork) {
      // a fork of a Claude Code or Qwen Code session works with that client's tools
      const shapes = clientShapesOf(request);
      const turn =
        shapes && clientChildTurn(request, fork.directive, toolExchanges(request.messages, fork.message), shapes);
      return turn ?? childTurn(request, fork.directive, fork.message);
    }
    const instruction = lastUserText(request.messages, (text) => parseDirective(text).kind !== 'unknown');
    if (instruction) {
      const parsed = parseDirective(instruction.text);
      if (parsed.kind === 'rename-across')
        return parentRenameTurn(request, instruction.message, parsed.from, parsed.to, parsed.dir);
      return childTurn(request, instruction.text, instruction.message);
    }
    const last = lastUserText(request.messages)?.text ?? '';
    const text = formatReport({
      scope: last.split('\n')[0]?.trim() || '(no user text)',
      result: 'not done',
      keyFiles: [],
      filesChanged: [],
      issues: [
        'unknown directive (known: rename <old> to <new> in <path>; rename <old> to <new> across <dir>; read <path> and report)',
      ],
    });
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};
