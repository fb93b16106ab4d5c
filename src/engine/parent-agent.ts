import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../errors.ts';
import { FORK_PLACEHOLDER_RESULT, SPAWN_TOOL_NAME } from '../fork/constants.ts';
import { captureSnapshot, type ParentSnapshot } from '../fork/snapshot.ts';
import { toAssistantParam } from '../loop/messages.ts';
import { markChild } from '../prefix/body.ts';
import type { ToolExecutor } from '../tools/executor.ts';

/** What the parent's spawn calls produced: one `<task-notification>` per fork. */
export interface SpawnResults {
  notifications: string[];
}

export interface ParentAgentOptions {
  client: Anthropic;
  model: string;
  system: string | Anthropic.TextBlockParam[];
  tools: readonly Anthropic.ToolUnion[];
  executor: ToolExecutor;
  prompt: string;
  maxTurns?: number;
  maxTokens?: number;
  /**
   * The parent called the spawn tool: fan out. `snapshot` is the parent's last request with
   * the spawning assistant message appended, exactly as sent.
   */
  onSpawn(spawn: { snapshot: ParentSnapshot; calls: Anthropic.ToolUseBlock[]; lastUsage: Anthropic.Usage }): Promise<SpawnResults>;
  onTurn?: (turn: { turn: number; usage: Anthropic.Usage; message: Anthropic.Message }) => void;
}

export interface ParentAgentResult {
  messages: Anthropic.MessageParam[];
  usages: Anthropic.Usage[];
  finalText: string;
  turns: number;
}

/**
 * A plain agent loop on the main thread (the demo's parent): it caches its own prefix with a
 * marker on the system prompt and a moving marker on its last block, and hands its spawn
 * calls to `onSpawn`.
 */
export async function runParentAgent(options: ParentAgentOptions): Promise<ParentAgentResult> {
  const system = markSystem(options.system);
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: options.prompt }] }];
  const usages: Anthropic.Usage[] = [];
  const maxTurns = options.maxTurns ?? 50;
  for (let turn = 1; turn <= maxTurns; turn++) {
    const marked = markChild({ tailBlocks: [], messages }, '5m').messages as Anthropic.MessageParam[];
    const request = { model: options.model, max_tokens: options.maxTokens ?? 8192, system, tools: [...options.tools], messages: marked };
    const message = await options.client.messages.create(request as Anthropic.MessageCreateParamsNonStreaming);
    usages.push(message.usage);
    options.onTurn?.({ turn, usage: message.usage, message });
    const assistant = toAssistantParam(message);
    const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    if (uses.length === 0) {
      messages.push(assistant);
      const finalText = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      return { messages, usages, finalText, turns: turn };
    }
    const spawns = uses.filter((u) => u.name === SPAWN_TOOL_NAME);
    const spawned: SpawnResults = spawns.length
      ? await options.onSpawn({ snapshot: captureSnapshot({ ...request, messages: [...marked, assistant] }), calls: spawns, lastUsage: message.usage })
      : { notifications: [] };
    messages.push(assistant);
    const results: Anthropic.ContentBlockParam[] = [];
    for (const use of uses) {
      // A spawn returns the constant placeholder at once, exactly as every child saw it: the
      // parent's next request then shares the children's prefix up to the placeholders.
      if (use.name === SPAWN_TOOL_NAME) {
        results.push({ type: 'tool_result', tool_use_id: use.id, content: FORK_PLACEHOLDER_RESULT });
        continue;
      }
      const result = await options.executor.execute(use.name, use.input);
      results.push({ type: 'tool_result', tool_use_id: use.id, content: result.content, ...(result.isError ? { is_error: true } : {}) });
    }
    for (const text of spawned.notifications) results.push({ type: 'text', text });
    messages.push({ role: 'user', content: results });
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
