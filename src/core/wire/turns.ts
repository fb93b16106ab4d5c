/**
 * The Messages API combines consecutive messages of one role into a single turn (two user
 * messages in a row are one user turn). Both sides of the wire need the rule: the snapshot
 * check (src/core/fork) must accept a parent the API accepts — a Claude Code session can hold two
 * user records in a row — and the emulator must answer as the API does. System turns stand
 * alone: they take no part in alternation or in tool_use/tool_result pairing.
 */

/** A block of a turn, with where it sits in the request (`messages[message].content[index]`). */
export interface TurnBlock {
  block: { type?: unknown; [key: string]: unknown };
  message: number;
  index: number;
}

export interface Turn {
  role: string;
  /** The indexes of the messages combined into this turn, in order. */
  messages: number[];
  blocks: TurnBlock[];
}

type Message = { role: string; content?: unknown };

function blocksOf(message: Message, at: number): TurnBlock[] {
  if (typeof message.content === 'string')
    return [{ block: { type: 'text', text: message.content }, message: at, index: 0 }];
  if (!Array.isArray(message.content)) return [];
  return (message.content as TurnBlock['block'][]).map((block, index) => ({ block, message: at, index }));
}

/** The request's messages as the API's turns: consecutive user (or assistant) messages combined, system turns apart. */
export function mergedTurns(messages: readonly Message[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((message, at) => {
    const last = turns[turns.length - 1];
    if (last && last.role === message.role && message.role !== 'system') {
      last.messages.push(at);
      last.blocks.push(...blocksOf(message, at));
    } else turns.push({ role: message.role, messages: [at], blocks: blocksOf(message, at) });
  });
  return turns;
}
