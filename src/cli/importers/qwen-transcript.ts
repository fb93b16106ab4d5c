import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../../core/util/errors.ts';
import { FORK_FALLBACK_SYSTEM_PROMPT } from '../../core/fork/fallback.ts';
import { captureSnapshot, type ParentSnapshot } from '../../core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../../core/tools/declarations.ts';
import { malformed } from './claude-wire.ts';
import type { Line } from './claude-tail.ts';

/*
 * A Qwen Code chat (`~/.qwen/projects/<cwd>/chats/<session>.jsonl`): `user`, `assistant`
 * (`message.role: "model"`) and `tool_result` records whose `message.parts` are Gemini-style
 * parts (`text`, possibly a `thought` with its `thoughtSignature`, `functionCall`, `functionResponse`), plus
 * `system` records (telemetry, snapshots) that are not part of the conversation. Qwen Code
 * writes neither its system prompt, its tools nor the reminders it adds to the first user
 * message, so the parent can only be approximated from the conversation; forks run in the
 * `qwen` layout.
 */

type Part = {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name: string; args?: unknown };
  functionResponse?: { id?: string; name: string; response?: unknown };
};

/** True when the records look like a Qwen Code chat (messages made of `parts`). */
export function isQwenChat(lines: readonly Line[]): boolean {
  return lines.some(({ value }) => Array.isArray((value as { message?: { parts?: unknown } }).message?.parts));
}

function toBlock(part: Part, path: string, line: number, type: string): Anthropic.ContentBlockParam | undefined {
  if (part.functionCall)
    return {
      type: 'tool_use',
      id: part.functionCall.id ?? `call_${line}`,
      name: part.functionCall.name,
      input: (part.functionCall.args ?? {}) as Record<string, unknown>,
    };
  if (part.functionResponse) {
    const r = part.functionResponse.response as { output?: unknown; error?: unknown } | undefined;
    const content = typeof r?.output === 'string' ? r.output : JSON.stringify(r ?? {});
    return {
      type: 'tool_result',
      tool_use_id: part.functionResponse.id ?? '',
      content,
      ...(r?.error !== undefined ? { is_error: true } : {}),
    };
  }
  if (typeof part.text === 'string') {
    // A thought's signature binds it to the history it followed, which began with reminders
    // the chat does not record: sent back under the rebuilt history it would be refused.
    if (part.thought) return undefined;
    return part.text.trim() === '' ? undefined : { type: 'text', text: part.text };
  }
  malformed(
    path,
    line,
    type,
    `message.parts: a part with neither text, functionCall nor functionResponse (${Object.keys(part).join(', ') || 'empty'})`,
  );
}

export function importQwenChat(
  path: string,
  lines: readonly Line[],
  options: { model?: string | undefined },
): { snapshot: ParentSnapshot; notes: string[]; expectedCachedTokens: number | undefined } {
  const messages: { role: 'user' | 'assistant'; content: Anthropic.ContentBlockParam[] }[] = [];
  let model: string | undefined;
  let expected: number | undefined;
  for (const { line, value } of lines) {
    const r = value as {
      type?: unknown;
      model?: unknown;
      message?: { role?: unknown; parts?: unknown };
      usageMetadata?: { promptTokenCount?: number };
    };
    const type = String(r.type);
    if (type !== 'user' && type !== 'assistant' && type !== 'tool_result') continue;
    if (!Array.isArray(r.message?.parts)) malformed(path, line, type, 'message.parts: expected an array of parts');
    const role = r.message.role === 'model' ? 'assistant' : 'user';
    if (type === 'assistant' && typeof r.model === 'string') model = r.model;
    // The last request's prompt is the prefix Qwen Code marked (its last marker is on the last user block).
    if (type === 'assistant' && typeof r.usageMetadata?.promptTokenCount === 'number')
      expected = r.usageMetadata.promptTokenCount;
    const blocks = (r.message.parts as Part[]).flatMap((p) => toBlock(p, path, line, type) ?? []);
    const last = messages.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else if (blocks.length > 0) messages.push({ role, content: blocks });
  }
  const chosen = options.model ?? model;
  if (!chosen)
    throw new ForkcacheError(
      'TRANSCRIPT_INVALID',
      `${path}: no assistant record names a model: give the plan a "model"`,
      { data: { file: path } },
    );
  const notes = [
    'a Qwen Code chat: forks run in the qwen layout',
    'thought parts dropped (their signatures bind them to the unrecorded original history)',
    "Qwen Code does not record its system prompt, tools or the reminders it adds to the first message: the fork agent's prompt and forkcache's tools are used, so the forks will not read the session's cache",
  ];
  const request = { model: chosen, system: FORK_FALLBACK_SYSTEM_PROMPT, tools: TOOL_DECLARATIONS, messages };
  try {
    return { snapshot: captureSnapshot(request), notes, expectedCachedTokens: expected };
  } catch (err) {
    throw new ForkcacheError(
      'TRANSCRIPT_INVALID',
      `${path}: cannot use this chat as a parent: ${(err as Error).message.replace(/^snapshot: /, '')}`,
      { cause: err, data: { file: path } },
    );
  }
}
