import { SPAWN_TOOL_NAME } from '../../../core/wire/fork-text.ts';
import type { MessagesRequest } from '../types.ts';
import { declaredTools, toolExchanges, userTextsAfter } from './conversation.ts';
import { escapeRegExp } from './directive.ts';
import type { ScriptedTurn } from './types.ts';

/*
 * The refactor model as a parent: `rename <old> to <new> across <dir>` is fanned out, one fork
 * per file that mentions <old>. Steps, each derived from the conversation so far:
 * grep → one assistant message with one `agent` call per file → a short summary (again after
 * every task notification that arrives later).
 */

const say = (text: string): ScriptedTurn => ({ content: [{ type: 'text', text }], stop_reason: 'end_turn' });

const NOTIFICATION_TAG = '<task-notification>';

function filesOf(grepOutput: string): string[] {
  const files = new Set<string>();
  for (const line of grepOutput.split('\n')) {
    const match = /^(.+?):\d+:/.exec(line);
    if (match) files.add(match[1]!);
  }
  return [...files];
}

const basename = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** The next turn of a parent asked (in message `from`) to rename `from` to `to` across `dir`. */
export function parentRenameTurn(
  request: Readonly<MessagesRequest>,
  from: number,
  old: string,
  renamed: string,
  dir: string,
): ScriptedTurn {
  const tools = declaredTools(request);
  if (!tools.has(SPAWN_TOOL_NAME))
    return say(`I cannot fan this out: the \`${SPAWN_TOOL_NAME}\` tool is not declared.`);
  if (!tools.has('grep')) return say('I cannot find the files to change: the `grep` tool is not declared.');
  const calls = toolExchanges(request.messages, from);
  const grep = calls.find((e) => e.name === 'grep');
  if (!grep)
    return {
      content: [{ type: 'tool_use', name: 'grep', input: { pattern: `\\b${escapeRegExp(old)}\\b`, path: dir } }],
      stop_reason: 'tool_use',
    };
  if (grep.result?.isError) return say(`Searching ${dir} for ${old} failed: ${grep.result.text.split('\n')[0] ?? ''}`);
  const files = filesOf(grep.result?.text ?? '');
  if (files.length === 0) return say(`No occurrences of ${old} under ${dir}; nothing to rename.`);

  const spawns = calls.filter((e) => e.name === SPAWN_TOOL_NAME);
  if (spawns.length === 0) {
    return {
      content: files.map((file) => ({
        type: 'tool_use' as const,
        name: SPAWN_TOOL_NAME,
        input: { directive: `rename ${old} to ${renamed} in ${file}`, description: `rename in ${basename(file)}` },
      })),
      stop_reason: 'tool_use',
    };
  }
  const spawnMessage = spawns[0]!.message;
  // Notifications arrive as user text: with the spawn results or in later turns, one or many
  // per message; count the tags.
  const texts = userTextsAfter(request.messages, spawnMessage);
  const reported = texts.reduce((n, t) => n + t.split(NOTIFICATION_TAG).length - 1, 0);
  // each notification says how its fork ended: a cancelled fork reported back, but did not rename
  const statuses = new Map<string, number>();
  for (const t of texts)
    for (const m of t.matchAll(/<status>([^<]*)<\/status>/g)) statuses.set(m[1]!, (statuses.get(m[1]!) ?? 0) + 1);
  const named = files.length > 5 ? `${files.slice(0, 5).join(', ')} and ${files.length - 5} more` : files.join(', ');
  const started = `Started ${spawns.length} fork(s) to rename ${old} to ${renamed} across ${dir}: ${named}.`;
  const counts = [...statuses].map(([status, n]) => `${n} ${status}`).join(', ');
  const status =
    reported === 0
      ? 'Waiting for their reports.'
      : reported >= spawns.length
        ? `All ${spawns.length} fork(s) reported back: ${counts}.`
        : `${reported} of ${spawns.length} fork(s) reported back: ${counts}.`;
  return say(`${started} ${status}`);
}
