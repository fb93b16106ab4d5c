import { BACKGROUND_REPORTS_HEADING, BACKGROUND_STARTED } from '../../../core/wire/fork-text.ts';
import { findForkDirective, lastUserText, toolExchanges } from './conversation.ts';
import { hostToolsModel } from './host-tools.ts';
import type { ScriptedModel, ScriptedTurn } from './types.ts';

/** `fork 20: triage the open tickets` → 20 directives (`… (part 3 of 20)`). */
const FORK_ASK = /^fork\s+(\d{1,4})\s*:\s*(.+)$/i;

/**
 * `ai-sdk`: an AI SDK app's agent that forks. As the parent, given `fork <n>: <task>`, it
 * calls the `fork` tool the request declares with n directives, then answers with what the
 * tool returned (in the background: that they run, and later, given the message with their
 * reports, what they reported); as a fork child it is `host-tools` (it calls the app's own tools, then
 * reports). Anything else gets a one-line answer.
 */
export const aiSdkParentModel: ScriptedModel = {
  name: 'ai-sdk',
  respond(input): ScriptedTurn | Promise<ScriptedTurn> {
    const { request } = input;
    if (findForkDirective(request.messages)) return hostToolsModel.respond(input);
    const user = lastUserText(request.messages);
    if (user?.text.startsWith(BACKGROUND_REPORTS_HEADING)) {
      const forks = user.text.match(/^## \S+ \(completed\)/gm)?.length ?? 0;
      return {
        content: [
          { type: 'text', text: `The background forks reported: ${forks} completed. ${user.text.slice(0, 2000)}` },
        ],
        stop_reason: 'end_turn',
      };
    }
    const ask = FORK_ASK.exec((user?.text ?? '').trim());
    const declared = (request.tools ?? []).some((t) => t.name === 'fork');
    if (!ask || !declared || !user)
      return { content: [{ type: 'text', text: 'Nothing to fork (ask: fork <n>: <task>).' }], stop_reason: 'end_turn' };
    const call = toolExchanges(request.messages, user.message).find((c) => c.name === 'fork');
    if (!call) {
      const n = Number(ask[1]);
      const directives = Array.from({ length: n }, (_, i) => `${ask[2]!.trim()} (part ${i + 1} of ${n})`);
      return {
        content: [
          { type: 'text', text: `Forking ${n} children.` },
          { type: 'tool_use', name: 'fork', input: { directives } },
        ],
      };
    }
    const text = call.result?.isError
      ? `The fork failed: ${call.result.text.slice(0, 300)}`
      : call.result?.text.includes(BACKGROUND_STARTED)
        ? 'The forks run in the background; I will read their reports when they arrive.'
        : `The children reported: ${(call.result?.text ?? '').slice(0, 2000)}`;
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};
