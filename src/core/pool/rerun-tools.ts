import type Anthropic from '@anthropic-ai/sdk';
import type { ForkChild } from '../fork/layouts.ts';
import type { TranscriptSink } from '../loop/transcript-sink.ts';
import type { ToolExecutor } from '../tools/executor.ts';
import type { RerunCall } from './resume-messages.ts';

/**
 * Run the read-only calls a stop interrupted again, before the fork's next turn, and put their
 * real results where resume left a placeholder (resume-messages.ts): reading twice changes
 * nothing, and "effect unknown, check the state" made the model give up on a plain read
 * ("Result: not done", issue 24). The result is recorded as the call's end in the transcript.
 * Only calls the policy allows outright: nobody is asked again for a call made before.
 */
export async function rerunReadOnly(
  calls: readonly RerunCall[],
  child: ForkChild,
  tools: ToolExecutor,
  transcript: TranscriptSink | undefined,
  signal: AbortSignal,
): Promise<ForkChild> {
  const last = child.messages.at(-1);
  if (calls.length === 0 || last?.role !== 'user' || !Array.isArray(last.content)) return child;
  const content: Anthropic.ContentBlockParam[] = [...last.content];
  for (const call of calls) {
    const at = content.findIndex((b) => b.type === 'tool_result' && b.tool_use_id === call.id);
    if (at < 0) continue;
    // the executor's gate runs it only when the policy allows it outright (`rerun`)
    const result = await tools.execute(call.name, call.input, { signal, toolUseId: call.id, rerun: true });
    if (result.isError && result.code === 'PERMISSION_DENIED') continue;
    transcript?.toolEnd({ turn: call.turn, id: call.id, isError: result.isError, content: result.content });
    content[at] = {
      type: 'tool_result',
      tool_use_id: call.id,
      content: result.content,
      ...(result.isError ? { is_error: true } : {}),
    };
  }
  return { ...child, messages: [...child.messages.slice(0, -1), { role: 'user', content }] };
}
