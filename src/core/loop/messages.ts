import { posix } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';

/**
 * A response's content as request params, the way it goes back to the API next turn:
 * response-only fields (`citations: null`, …) are left out, everything the model said is kept.
 */
export function toAssistantParam(message: Anthropic.Message): Anthropic.MessageParam {
  const content = message.content.map((block): Anthropic.ContentBlockParam => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'tool_use':
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input as Record<string, unknown> };
      case 'thinking':
        return { type: 'thinking', thinking: block.thinking, signature: block.signature };
      case 'redacted_thinking':
        return { type: 'redacted_thinking', data: block.data };
      default:
        return block as unknown as Anthropic.ContentBlockParam;
    }
  });
  return { role: 'assistant', content };
}

const WRITING_TOOLS = new Set(['edit_file', 'write_file']);

/** The workspace-relative path a write/edit call named (successful or not), normalised. */
export function targetPath(use: Anthropic.ToolUseBlock): string | undefined {
  if (!WRITING_TOOLS.has(use.name)) return undefined;
  const path = (use.input as { path?: unknown } | null)?.path;
  if (typeof path !== 'string') return undefined;
  return posix.normalize(path.replace(/\\/g, '/')).replace(/^\.\//, '');
}

/** The workspace-relative path a successful write/edit touched, normalised (`./a/../b.ts` → `b.ts`). */
export function writtenPath(use: Anthropic.ToolUseBlock, isError: boolean): string | undefined {
  return isError ? undefined : targetPath(use);
}

/** The text of a message or response (its text blocks, joined by newlines). */
export function textOf(message: { content: string | readonly { type: string; text?: string }[] } | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : [])).join('\n');
}

/** Tools whose successful call may have changed a file: the writing tools, and bash (it can write anything). */
const MAY_CHANGE = new Set([...WRITING_TOOLS, 'bash']);

/**
 * Whether the fork's own conversation holds a successful call that may have changed a file
 * (an `edit_file` or `write_file`, or a `bash` command: what it wrote cannot be seen from here).
 * Read from the messages, so a resumed fork counts the turns of its earlier passes too.
 */
export function mayHaveChangedFiles(own: readonly Anthropic.MessageParam[]): boolean {
  const calls = new Set<string>();
  for (const message of own) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type === 'tool_use' && MAY_CHANGE.has(block.name)) calls.add(block.id);
      else if (block.type === 'tool_result' && calls.has(block.tool_use_id) && block.is_error !== true) return true;
    }
  }
  return false;
}
