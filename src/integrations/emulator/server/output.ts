import { toolUseId } from '../ids.ts';
import type { ScriptedTurn } from '../scripts/types.ts';
import type { ResponseBlock, StopReason } from '../types.ts';

export interface BuiltOutput {
  content: ResponseBlock[];
  /** Output tokens of each block of `content` (used to pace the stream). */
  blockTokens: number[];
  outputTokens: number;
  stopReason: StopReason;
  stopSequence: string | null;
}

interface OutputOptions {
  maxTokens: number;
  stopSequences: readonly string[];
  /** Hash of the prompt: tool_use ids derive from it, so replays get the same ids. */
  promptHash: string;
  count(text: string): number;
  /** A thinking block to open the answer with (adaptive-thinking models; see model-rules). */
  thinking?: { thinking: string; signature: string } | undefined;
}

function tokensOf(block: ResponseBlock, count: (text: string) => number): number {
  if (block.type === 'thinking') return count(block.thinking);
  return block.type === 'text' ? count(block.text) : count(block.name) + count(JSON.stringify(block.input));
}

// The earliest stop sequence in any text block: the turn ends just before it.
function applyStopSequences(
  blocks: ResponseBlock[],
  sequences: readonly string[],
): { blocks: ResponseBlock[]; sequence: string | null } {
  if (sequences.length === 0) return { blocks, sequence: null };
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    if (block.type !== 'text') continue;
    let best: { at: number; sequence: string } | undefined;
    for (const sequence of sequences) {
      const at = sequence === '' ? -1 : block.text.indexOf(sequence);
      if (at >= 0 && (!best || at < best.at)) best = { at, sequence };
    }
    if (!best) continue;
    const kept = blocks.slice(0, i);
    const text = block.text.slice(0, best.at);
    if (text !== '') kept.push({ type: 'text', text });
    return { blocks: kept, sequence: best.sequence };
  }
  return { blocks, sequence: null };
}

/**
 * Turn a scripted turn into the response content: deterministic tool_use ids, stop sequences,
 * the `max_tokens` cut (text is truncated, a tool_use that does not fit is dropped, and
 * `output_tokens` is then exactly `max_tokens`), and the stop reason.
 */
export function buildOutput(turn: ScriptedTurn, options: OutputOptions): BuiltOutput {
  if (options.maxTokens === 0) {
    return { content: [], blockTokens: [], outputTokens: 0, stopReason: 'max_tokens', stopSequence: null };
  }
  let toolIndex = 0;
  const blocks: ResponseBlock[] = turn.content.map((b) =>
    b.type === 'text'
      ? { type: 'text', text: b.text }
      : { type: 'tool_use', id: b.id ?? toolUseId(options.promptHash, toolIndex++), name: b.name, input: b.input },
  );
  if (options.thinking) blocks.unshift({ type: 'thinking', ...options.thinking });
  const stopped = applyStopSequences(blocks, options.stopSequences);
  const content: ResponseBlock[] = [];
  const blockTokens: number[] = [];
  let used = 0;
  for (const block of stopped.blocks) {
    const tokens = tokensOf(block, options.count);
    if (used + tokens <= options.maxTokens) {
      content.push(block);
      blockTokens.push(tokens);
      used += tokens;
      continue;
    }
    const room = options.maxTokens - used;
    if (block.type === 'text' && room > 0) {
      let cut = Math.floor((block.text.length * room) / tokens);
      while (cut > 0 && options.count(block.text.slice(0, cut)) > room) cut = Math.floor(cut * 0.9);
      if (cut > 0) {
        content.push({ type: 'text', text: block.text.slice(0, cut) });
        blockTokens.push(room);
      }
    }
    return { content, blockTokens, outputTokens: options.maxTokens, stopReason: 'max_tokens', stopSequence: null };
  }
  const hasToolUse = content.some((b) => b.type === 'tool_use');
  const stopReason: StopReason =
    stopped.sequence !== null ? 'stop_sequence' : (turn.stop_reason ?? (hasToolUse ? 'tool_use' : 'end_turn'));
  return { content, blockTokens, outputTokens: used, stopReason, stopSequence: stopped.sequence };
}
