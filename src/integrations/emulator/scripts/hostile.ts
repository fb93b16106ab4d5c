import { findForkDirective } from './conversation.ts';
import { formatReport } from './directive.ts';
import type { ScriptedModel, ScriptedTurn } from './types.ts';

/*
 * `hostile`: issue 43's attacks on the tool gate, each by the route a real client takes. A fork
 * whose directive is `attack <name>` makes that attack's one tool call, then reports; every other
 * fork (the benign ones, the parent) reports at once. The workspace it expects: `grow.txt` of
 * 1,000 `e`, `260k.txt` of 260 KB; the host tools `post_comment` (the policy denies it) and
 * `delete_ticket` (in `denyTools`). A parent declares one client's tool set, so the attacks
 * come in two tables: Qwen Code's (its deferred `tool_call` among them) and Claude Code's.
 */

interface Attack {
  readonly name: string;
  readonly input: Record<string, unknown>;
}

const nested = (depth: number, inner: string): string => `${'{'.repeat(depth)}${inner}${'}'.repeat(depth)}`;
const toolCall = (name: string, args: Record<string, unknown>): Attack => ({
  name: 'tool_call',
  input: { name, arguments: args },
});

/** The attacks a Qwen Code fork makes (its tools; `tool_call` for the deferred ones and host tools). */
export const QWEN_ATTACKS: Readonly<Record<string, Attack>> = {
  'tool_call host tool the policy denies': toolCall('post_comment', { body: 'spam' }),
  'host tool in denyTools': { name: 'delete_ticket', input: { id: 'T-1' } },
  'tool_call host tool in denyTools': toolCall('delete_ticket', { id: 'T-1' }),
  'glob nested braces': { name: 'glob', input: { pattern: nested(40, 'a') } },
  'grep_search nested braces': { name: 'grep_search', input: { pattern: 'a', glob: nested(30, 'a') } },
  'tool_call read_many_files 260 KB x 300': toolCall('read_many_files', {
    paths: Array.from({ length: 300 }, () => '260k.txt'),
  }),
  'tool_call edit e -> 4000 e replace_all': toolCall('edit', {
    file_path: 'grow.txt',
    old_string: 'e',
    new_string: 'e'.repeat(4000),
    replace_all: true,
  }),
};

/** The attacks a Claude Code fork makes: the 40-edit MultiEdit among them. */
export const CLAUDE_ATTACKS: Readonly<Record<string, Attack>> = {
  'MultiEdit 40 x e -> ee replace_all': {
    name: 'MultiEdit',
    input: {
      file_path: 'grow.txt',
      edits: Array.from({ length: 40 }, () => ({ old_string: 'e', new_string: 'ee', replace_all: true })),
    },
  },
  'Glob nested braces': { name: 'Glob', input: { pattern: nested(40, 'a') } },
  'host tool the policy denies': { name: 'post_comment', input: { body: 'spam' } },
  'host tool in denyTools': { name: 'delete_ticket', input: { id: 'T-1' } },
};

const ATTACKS: Readonly<Record<string, Attack>> = { ...QWEN_ATTACKS, ...CLAUDE_ATTACKS };
const PREFIX = 'attack ';

export const hostileModel: ScriptedModel = {
  name: 'hostile',
  respond({ request }): ScriptedTurn {
    const fork = findForkDirective(request.messages);
    const directive = fork?.directive ?? '';
    // the attack is the fork's first turn only: after its result, the fork reports
    const attack =
      fork && fork.message === request.messages.length - 1 && directive.startsWith(PREFIX)
        ? ATTACKS[directive.slice(PREFIX.length)]
        : undefined;
    if (attack) return { content: [{ type: 'tool_use', name: attack.name, input: attack.input }] };
    const report = formatReport({
      scope: directive || '(parent)',
      result: 'done',
      keyFiles: [],
      filesChanged: [],
      issues: [],
    });
    return { content: [{ type: 'text', text: report }], stop_reason: 'end_turn' };
  },
};
