import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import { FORK_BOILERPLATE_OPEN, FORK_QUERY_SOURCE } from '../wire/fork-text.ts';
import { blocksOf } from './history.ts';

interface ForkContext {
  /** The query source carried with the task (not in the prompt). */
  querySource?: string | undefined;
  /** The conversation as the agent currently holds it (may have been compacted or rewritten). */
  messages: readonly Anthropic.MessageParam[];
}

/**
 * Whether a conversation belongs to a fork child. Belt and braces:
 * 1. the fast path, the task's query source;
 * 2. the fallback, the boilerplate tag in the child's own user text, which survives history
 *    rewriting that loses the flag. Only user-authored text counts: a tool_result that merely
 *    shows a file containing the tag (forkcache's own sources, say) does not make a fork.
 */
export function isForkChild(context: ForkContext): boolean {
  if (context.querySource === FORK_QUERY_SOURCE) return true;
  return context.messages.some(
    (message) =>
      message.role === 'user' &&
      blocksOf(message).some((block) => block.type === 'text' && block.text.includes(FORK_BOILERPLATE_OPEN)),
  );
}

/** What the model sees when a fork child tries to spawn: do the work yourself. */
export const FORK_RECURSION_MESSAGE =
  'Forking is not available inside a fork. You are a fork child: do this work directly with your own tools, then report.';

/** Refuse a spawn from a fork child (both guard layers). */
export function assertMaySpawn(context: ForkContext): void {
  if (isForkChild(context)) {
    throw new ForkcacheError('FORK_RECURSION', FORK_RECURSION_MESSAGE, {
      data: { querySource: context.querySource ?? null },
    });
  }
}

interface SpawnRequest {
  /** An explicit agent type: that agent runs with its own system prompt and tools. */
  subagentType?: string | undefined;
  /** Coordinator mode never forks. */
  coordinatorMode?: boolean;
}

type SpawnDecision =
  { kind: 'fork' } | { kind: 'fresh'; agentType: string; reason: 'explicit-agent-type' | 'coordinator-mode' };

/** The general-purpose agent used when forking is off (coordinator mode). */
const GENERAL_PURPOSE_AGENT = 'general-purpose';

/**
 * Fork or fresh agent? A spawn without an agent type forks (shares the parent's prefix);
 * an explicit type, or coordinator mode, starts a fresh agent that shares nothing.
 */
export function decideSpawn(request: SpawnRequest): SpawnDecision {
  if (request.subagentType !== undefined && request.subagentType !== '') {
    return { kind: 'fresh', agentType: request.subagentType, reason: 'explicit-agent-type' };
  }
  if (request.coordinatorMode) return { kind: 'fresh', agentType: GENERAL_PURPOSE_AGENT, reason: 'coordinator-mode' };
  return { kind: 'fork' };
}
