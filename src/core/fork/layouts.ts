import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../util/errors.ts';
import { FORK_PLACEHOLDER_RESULT, QWEN_ACK, QWEN_BEGIN } from '../wire/fork-text.ts';
import { blocksOf, toolUsesOf } from './history.ts';

type Block = Anthropic.ContentBlockParam;
type Message = Anthropic.MessageParam;

export type ForkLayout = 'claude' | 'qwen';
export const FORK_LAYOUTS: readonly ForkLayout[] = ['claude', 'qwen'];

/** How the parent's history ends, which decides the shape of every child's messages. */
export type HistoryCase = 'empty' | 'ends-with-model' | 'ends-with-calls' | 'ends-with-user';

/**
 * What a child adds to the shared messages. The shared part ends with the *boundary message*
 * (the last shared one); `tailBlocks` continue that message's content, `messages` follow it.
 * Only these differ between siblings.
 */
export interface ForkChild {
  readonly tailBlocks: readonly Block[];
  readonly messages: readonly Message[];
}

/** The part of a fork's messages that is the same for every child, and how a child continues it. */
export interface ForkPlan {
  readonly layout: ForkLayout;
  readonly historyCase: HistoryCase;
  /** Complete shared messages; the last one (if any) is the boundary message, in block form. */
  readonly shared: readonly Message[];
  /** Build one child's continuation from its already wrapped directive. */
  continuation(wrappedDirective: string): ForkChild;
}

function text(value: string): Anthropic.TextBlockParam {
  return { type: 'text', text: value };
}

/** One constant placeholder result per tool_use: byte-identical blocks for every child. */
function placeholders(assistant: Message): Anthropic.ToolResultBlockParam[] {
  return toolUsesOf(assistant).map(({ block }) => ({
    type: 'tool_result',
    tool_use_id: block.id,
    content: FORK_PLACEHOLDER_RESULT,
  }));
}

function classify(history: readonly Message[]): HistoryCase {
  const last = history.at(-1);
  if (!last) return 'empty';
  if (last.role === 'user') return 'ends-with-user';
  return toolUsesOf(last).length > 0 ? 'ends-with-calls' : 'ends-with-model';
}

/**
 * The last shared message must be in block form with `content` as its last key: the frozen
 * head ends inside its content array and children append blocks there.
 */
function withBoundaryInBlockForm(shared: Message[]): Message[] {
  const last = shared.at(-1);
  if (last) shared[shared.length - 1] = { role: last.role, content: blocksOf(last) } as Message;
  return shared;
}

function plan(
  layout: ForkLayout,
  historyCase: HistoryCase,
  shared: Message[],
  continuation: (w: string) => ForkChild,
): ForkPlan {
  return { layout, historyCase, shared: withBoundaryInBlockForm(shared), continuation };
}

const appendUserTurn = (w: string): ForkChild => ({ tailBlocks: [], messages: [{ role: 'user', content: [text(w)] }] });
const appendToBoundary = (w: string): ForkChild => ({ tailBlocks: [text(w)], messages: [] });

/**
 * Claude layout (the default): clone the parent's last assistant message with all its
 * tool_use blocks, then one user message with a placeholder tool_result per tool_use followed
 * by the wrapped directive. A history that ends with the user gets the directive appended to
 * that message; one that ends with a plain model turn gets a new user turn.
 */
function planClaude(history: Message[], historyCase: HistoryCase): ForkPlan {
  switch (historyCase) {
    case 'empty':
    case 'ends-with-model':
      return plan('claude', historyCase, history, appendUserTurn);
    case 'ends-with-calls':
      return plan(
        'claude',
        historyCase,
        [...history, { role: 'user', content: placeholders(history.at(-1)!) }],
        appendToBoundary,
      );
    case 'ends-with-user':
      return plan('claude', historyCase, history, appendToBoundary);
  }
}

/**
 * Qwen/Gemini layout: strict alternation and an agent runner that always sends a task prompt
 * as the next user turn (seed 000). With calls pending, the placeholders and the directive go
 * in one user turn, the model acknowledges, and the task prompt is `Begin.`.
 * A trailing user message is dropped; if that leaves calls unanswered, the calls case applies
 * (a dangling tool_use must never reach the API).
 */
function planQwen(history: Message[], historyCase: HistoryCase): ForkPlan {
  switch (historyCase) {
    case 'empty':
    case 'ends-with-model':
      return plan('qwen', historyCase, history, appendUserTurn);
    case 'ends-with-calls':
      return plan('qwen', historyCase, [...history, { role: 'user', content: placeholders(history.at(-1)!) }], (w) => ({
        tailBlocks: [text(w)],
        messages: [
          { role: 'assistant', content: [text(QWEN_ACK)] },
          { role: 'user', content: [text(QWEN_BEGIN)] },
        ],
      }));
    case 'ends-with-user': {
      const rest = history.slice(0, -1);
      const inner = planQwen(rest, classify(rest));
      return { ...inner, historyCase };
    }
  }
}

/**
 * Decide the shared messages of a fan-out and how each child continues them.
 * The input history is not modified; shared messages are fresh objects where they change.
 */
export function planFork(history: readonly Message[], layout: ForkLayout = 'claude'): ForkPlan {
  if (!FORK_LAYOUTS.includes(layout)) {
    throw new ForkcacheError(
      'INVALID_OPTION',
      `layout: expected one of ${FORK_LAYOUTS.join(', ')}, got "${String(layout)}"`,
      { data: { field: 'layout' } },
    );
  }
  const copy = [...history];
  return layout === 'claude' ? planClaude(copy, classify(copy)) : planQwen(copy, classify(copy));
}

/** A child's whole message list: the shared messages, its tail blocks, its own messages. */
export function childMessages(shared: readonly Message[], child: ForkChild): Message[] {
  const out = [...shared];
  const boundary = out.at(-1);
  if (child.tailBlocks.length > 0) {
    if (!boundary) throw new ForkcacheError('INTERNAL', 'a child with tail blocks needs a boundary message');
    out[out.length - 1] = { role: boundary.role, content: [...blocksOf(boundary), ...child.tailBlocks] } as Message;
  }
  return [...out, ...child.messages];
}
