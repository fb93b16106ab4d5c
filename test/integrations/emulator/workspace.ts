import type Anthropic from '@anthropic-ai/sdk';
import { FORK_PLACEHOLDER_RESULT } from '../../../src/core/wire/fork-text.ts';
import { MODEL } from './helpers.ts';

/*
 * A tiny in-memory stand-in for the fork tools (same names and inputs as the real ones), and an
 * agent loop over the SDK: enough to watch the scripted models work like real ones.
 */

const schema = { type: 'object' } as const;
export const TOOLS: Anthropic.Tool[] = [
  'read_file',
  'list_dir',
  'grep',
  'glob',
  'edit_file',
  'write_file',
  'agent',
].map((name) => ({
  name,
  input_schema: schema,
}));

export type Files = Map<string, string>;

function execute(files: Files, name: string, input: Record<string, unknown>): { text: string; isError?: true } {
  const path = String(input['path'] ?? '');
  switch (name) {
    case 'read_file': {
      const text = files.get(path);
      return text === undefined ? { text: `${path}: no such file`, isError: true } : { text };
    }
    case 'write_file':
      files.set(path, String(input['content']));
      return { text: `wrote ${path}` };
    case 'edit_file': {
      const text = files.get(path);
      const [from, to] = [String(input['old_string']), String(input['new_string'])];
      if (text === undefined || !text.includes(from)) return { text: `${path}: old_string not found`, isError: true };
      files.set(path, input['replace_all'] === true ? text.split(from).join(to) : text.replace(from, to));
      return { text: `edited ${path}` };
    }
    case 'grep': {
      const pattern = new RegExp(String(input['pattern']));
      const lines: string[] = [];
      for (const [file, text] of [...files].sort()) {
        if (path && !file.startsWith(`${path}/`)) continue;
        text.split('\n').forEach((line, i) => pattern.test(line) && lines.push(`${file}:${i + 1}:${line}`));
      }
      return { text: lines.join('\n') };
    }
    case 'agent':
      return { text: FORK_PLACEHOLDER_RESULT };
    default:
      return { text: `unknown tool ${name}`, isError: true };
  }
}

export function runTools(files: Files, message: Anthropic.Message): Anthropic.ToolResultBlockParam[] {
  return message.content
    .filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')
    .map((call) => {
      const result = execute(files, call.name, call.input as Record<string, unknown>);
      return {
        type: 'tool_result',
        tool_use_id: call.id,
        content: result.text,
        ...(result.isError ? { is_error: true } : {}),
      };
    });
}

/** Run the model until it stops calling tools; returns the final message and the tool calls made. */
export async function agentLoop(
  api: Anthropic,
  messages: Anthropic.MessageParam[],
  files: Files,
  headers: Record<string, string>,
  maxTurns = 10,
) {
  const calls: string[] = [];
  for (let turn = 0; turn < maxTurns; turn++) {
    const message = await api.messages.create({ model: MODEL, max_tokens: 4096, tools: TOOLS, messages }, { headers });
    messages.push({ role: 'assistant', content: message.content as Anthropic.ContentBlockParam[] });
    if (message.stop_reason !== 'tool_use') return { message, calls };
    for (const b of message.content) if (b.type === 'tool_use') calls.push(b.name);
    messages.push({ role: 'user', content: runTools(files, message) });
  }
  throw new Error('agent loop did not finish');
}

export function finalText(message: Anthropic.Message): string {
  return message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}
