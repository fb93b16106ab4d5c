import { aiSdkParentModel } from '../../../src/integrations/emulator/scripts/ai-sdk-parent.ts';
import {
  findForkDirective,
  lastUserText,
  toolExchanges,
} from '../../../src/integrations/emulator/scripts/conversation.ts';
import type { ScriptedModel, ScriptedTurn } from '../../../src/integrations/emulator/scripts/types.ts';
import type { MessagesRequest } from '../../../src/integrations/emulator/types.ts';
import { OUTPUT_INVALID_TAG } from '../../../src/core/wire/fork-text.ts';

// The scripted model of the typed-results tests (AI SDK 6 in test/integrations/ai-sdk/typed-output.test.ts,
// AI SDK 7 in test/clients/ai-sdk-7.test.ts): their apps' schema is
// `{ ticket: string, priority: 'low' | 'high' }`.

const report = (value: unknown): ScriptedTurn => ({
  content: [
    {
      type: 'text',
      text: [
        'Scope: the ticket of my part',
        `Result: \n\`\`\`json\n${JSON.stringify(value)}\n\`\`\``,
        'Key files: none',
        'Files changed: none',
        'Issues: none',
      ].join('\n'),
    },
  ],
  stop_reason: 'end_turn',
});

/** Whether a request is a repair turn: its last user text is forkcache's invalid-output message. */
export const isRepair = (request: MessagesRequest): boolean =>
  lastUserText(request.messages)?.text.startsWith(`<${OUTPUT_INVALID_TAG}>`) === true;

/**
 * `typed-output`: the parent is `ai-sdk`; each child looks its user up (one tool turn, so its
 * own history is more than the directive), then reports by its part: 1 a match, 2 a number for
 * `ticket` until it is shown the errors, 3 an unknown priority every time. Every request it
 * answers is kept in `seen`, in arrival order.
 */
export function typedOutputModel(): { model: ScriptedModel; seen: MessagesRequest[] } {
  const seen: MessagesRequest[] = [];
  const model: ScriptedModel = {
    name: 'typed-output',
    respond(input) {
      const { request } = input;
      seen.push(request);
      const fork = findForkDirective(request.messages);
      if (!fork) return aiSdkParentModel.respond(input);
      if (!toolExchanges(request.messages, fork.message).some((c) => c.name === 'lookup_user'))
        return { content: [{ type: 'tool_use', name: 'lookup_user', input: { name: 'ada' } }] };
      const part = Number(/part (\d) of/.exec(fork.directive)?.[1]);
      if (part === 1) return report({ ticket: 'T-1', priority: 'high' });
      if (part === 2)
        return report(isRepair(request) ? { ticket: 'T-2', priority: 'low' } : { ticket: 2, priority: 'low' });
      return report({ ticket: 'T-3', priority: 'urgent' });
    },
  };
  return { model, seen };
}
