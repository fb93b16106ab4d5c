import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import { SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { textOf, toAssistantParam } from '../loop/messages.ts';
import { markChild } from '../prefix/body.ts';
import type { ToolExecutor } from '../tools/executor.ts';
import { DEFAULT_CACHE_TTL } from '../wire/cache.ts';
import type { AgentTool } from './agent-tool.ts';

export interface ParentAgentOptions {
  client: Anthropic;
  /**
   * How a turn is sent (default: `client.messages.create`). Another provider's parent sends
   * the same neutral request through its own wire (e.g. `sendChatRequest`).
   */
  send?: ((request: Anthropic.MessageCreateParamsNonStreaming) => Promise<Anthropic.Message>) | undefined;
  model: string;
  system: string | Anthropic.TextBlockParam[];
  tools: readonly Anthropic.ToolUnion[];
  executor: ToolExecutor;
  /** The spawn tool (`engine.agentTool()`): its calls fork. */
  agentTool: AgentTool;
  prompt: string;
  maxTurns?: number;
  maxTokens?: number;
  /** After each turn; `sentAt` is when its request started (the ledger's `at`). */
  onTurn?: (turn: { turn: number; usage: Anthropic.Usage; message: Anthropic.Message; sentAt: number }) => void;
}

export interface ParentAgentResult {
  messages: Anthropic.MessageParam[];
  usages: Anthropic.Usage[];
  finalText: string;
  turns: number;
}

/**
 * A plain agent loop on the main thread (the demo's parent). It caches its own prefix (a
 * marker on the system prompt, a moving marker on its last block), hands spawn calls to the
 * agent tool, and, when it ends a turn while forks still run, waits for their
 * `<task-notification>`s and gives them to the model as the next user turn.
 */
export async function runParentAgent(options: ParentAgentOptions): Promise<ParentAgentResult> {
  const system = markSystem(options.system);
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: options.prompt }] }];
  const usages: Anthropic.Usage[] = [];
  const maxTurns = options.maxTurns ?? 50;
  for (let turn = 1; turn <= maxTurns; turn++) {
    const marked = markChild({ tailBlocks: [], messages }, DEFAULT_CACHE_TTL).messages as Anthropic.MessageParam[];
    const request = {
      model: options.model,
      max_tokens: options.maxTokens ?? 8192,
      system,
      tools: [...options.tools],
      messages: marked,
    };
    const sentAt = Date.now();
    const params = request as Anthropic.MessageCreateParamsNonStreaming;
    const message = await (options.send ? options.send(params) : options.client.messages.create(params));
    usages.push(message.usage);
    options.onTurn?.({ turn, usage: message.usage, message, sentAt });
    const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    const spawned = uses.some((u) => u.name === SPAWN_TOOL_NAME)
      ? await options.agentTool.handle({ request, message })
      : new Map();
    messages.push(toAssistantParam(message));
    const content: Anthropic.ContentBlockParam[] = [];
    for (const use of uses) {
      const result =
        use.name === SPAWN_TOOL_NAME ? spawned.get(use.id) : await options.executor.execute(use.name, use.input);
      content.push({
        type: 'tool_result',
        tool_use_id: use.id,
        content: result?.content ?? 'no result',
        ...(result?.isError ? { is_error: true } : {}),
      });
    }
    if (uses.length === 0) {
      if (options.agentTool.pending === 0 && options.agentTool.notificationsReady === 0) {
        const finalText = textOf(message);
        return { messages, usages, finalText, turns: turn };
      }
      await options.agentTool.idle(); // the model is waiting for its forks
    }
    for (const text of options.agentTool.takeNotifications()) content.push({ type: 'text', text });
    messages.push({ role: 'user', content });
  }
  throw new ForkcacheError('FORK_MAX_TURNS', `the parent agent did not finish in ${maxTurns} turns`);
}

/** The system prompt as blocks with a marker on the last one: the stable part of the prefix. */
function markSystem(system: string | Anthropic.TextBlockParam[]): Anthropic.TextBlockParam[] {
  const blocks = typeof system === 'string' ? [{ type: 'text' as const, text: system }] : [...system];
  const last = blocks.at(-1);
  if (last) blocks[blocks.length - 1] = { ...last, cache_control: { type: 'ephemeral' } };
  return blocks;
}
