import { findForkDirective, lastUserText } from './conversation.ts';
import { formatReport } from './directive.ts';
import type { ScriptedModel, ScriptedTurn } from './types.ts';

const firstLine = (text: string, max = 200): string => {
  const line = (text.split('\n').find((l) => l.trim() !== '') ?? '').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/**
 * `echo`: answers every request at once with a structured report describing what it received
 * (the fork directive, or the last user text). Never calls tools. The default scripted model:
 * cheap, deterministic, and its output shows which conversation reached it.
 */
export const echoModel: ScriptedModel = {
  name: 'echo',
  respond({ request, model }): ScriptedTurn {
    const fork = findForkDirective(request.messages);
    const user = lastUserText(request.messages);
    const scope = fork ? fork.directive : user ? user.text : '(no user text)';
    const tools = request.tools?.length ?? 0;
    const text = formatReport({
      scope: firstLine(scope) || '(empty)',
      result: `echo: ${request.messages.length} message(s), ${tools} tool(s) declared, model ${model.id}${fork ? ', fork child' : ''}`,
      keyFiles: [],
      filesChanged: [],
      issues: [],
    });
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};
