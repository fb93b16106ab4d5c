import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { cutAfter } from '../server/http-util.ts';
import type { Clock } from '../../../core/util/clock.ts';
import { jsonChunks, textChunks } from '../server/sse.ts';
import { outputMs, type LatencyProfile } from '../latency.ts';
import type { BuiltOutput } from '../server/output.ts';
import type { StopReason } from '../types.ts';

/** What every completion and chunk of one response shares. */
export interface CompletionHead {
  id: string;
  created: number;
  model: string;
  system_fingerprint: string;
}

const FINISH: Record<StopReason, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  pause_turn: 'stop',
  refusal: 'content_filter',
};

/** Tool-call ids in these APIs' shape (`call_…`), still derived from the prompt. */
export const callId = (toolUseId: string): string => toolUseId.replace(/^toolu_01/, 'call_');

function toolCalls(
  output: BuiltOutput,
): { id: string; type: 'function'; function: { name: string; arguments: string } }[] {
  return output.content.flatMap((b) =>
    b.type === 'tool_use'
      ? [
          {
            id: callId(b.id),
            type: 'function' as const,
            function: { name: b.name, arguments: JSON.stringify(b.input) },
          },
        ]
      : [],
  );
}

const textOf = (output: BuiltOutput): string =>
  output.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');

/** `object: "chat.completion"`: the whole answer in one JSON body. */
export function completionBody(
  head: CompletionHead,
  output: BuiltOutput,
  usage: Record<string, unknown>,
): Record<string, unknown> {
  const calls = toolCalls(output);
  const text = textOf(output);
  return {
    ...head,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && calls.length > 0 ? null : text,
          refusal: null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: FINISH[output.stopReason],
      },
    ],
    usage,
  };
}

interface ChunkStreamOptions {
  clock: Clock;
  profile: LatencyProfile;
  signal: AbortSignal;
  includeUsage: boolean;
  usage: Record<string, unknown>;
  failMidStream: boolean;
  /** Drop the connection after the first delta, with no error frame (the `cut` fault). */
  cutMidStream?: boolean | undefined;
  onTokens?: ((tokens: number) => void) | undefined;
}

const frame = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;

async function write(res: ServerResponse, text: string, signal: AbortSignal): Promise<void> {
  if (!res.write(text)) await once(res, 'drain', { signal });
}

/**
 * The SSE body of a streamed completion: `data:` frames only (no `event:` lines on this API),
 * a role delta first, content and tool-call argument deltas paced at the output rate, the
 * finish reason, then (with `stream_options.include_usage`) one chunk with empty `choices` and
 * the usage, then `data: [DONE]`. Every other chunk carries `usage: null` in that case.
 */
export async function streamChunks(
  res: ServerResponse,
  head: CompletionHead,
  output: BuiltOutput,
  options: ChunkStreamOptions,
): Promise<void> {
  const extra = options.includeUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    frame({
      ...head,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...extra,
    });
  const pace = async (tokens: number): Promise<void> => {
    const ms = outputMs(options.profile, tokens);
    if (ms > 0) await options.clock.sleep(ms, options.signal);
    options.onTokens?.(tokens);
  };
  await write(res, chunk({ role: 'assistant', content: '' }), options.signal);
  let callIndex = 0;
  for (const [index, block] of output.content.entries()) {
    const tokens = output.blockTokens[index] ?? 0;
    if (block.type === 'text') {
      for (const piece of textChunks(block.text)) {
        await pace(block.text.length === 0 ? tokens : (tokens * piece.length) / block.text.length);
        await write(res, chunk({ content: piece }), options.signal);
        if (options.failMidStream) return failStream(res);
        if (options.cutMidStream) return cutAfter(res);
      }
    } else if (block.type === 'tool_use') {
      const i = callIndex++;
      await write(
        res,
        chunk({
          tool_calls: [
            { index: i, id: callId(block.id), type: 'function', function: { name: block.name, arguments: '' } },
          ],
        }),
        options.signal,
      );
      const json = JSON.stringify(block.input);
      for (const piece of jsonChunks(json)) {
        await pace((tokens * piece.length) / json.length);
        await write(res, chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }), options.signal);
        if (options.failMidStream) return failStream(res);
        if (options.cutMidStream) return cutAfter(res);
      }
    }
  }
  if (options.failMidStream) return failStream(res);
  if (options.cutMidStream) return cutAfter(res);
  await write(res, chunk({}, FINISH[output.stopReason]), options.signal);
  if (options.includeUsage)
    await write(
      res,
      frame({ ...head, object: 'chat.completion.chunk', choices: [], usage: options.usage }),
      options.signal,
    );
  res.end('data: [DONE]\n\n');
}

/** A failure after the stream began: an `error` object in a data frame (the SDK throws on it). */
function failStream(res: ServerResponse): void {
  res.end(
    frame({
      error: {
        message: 'The server had an error while processing your request.',
        type: 'server_error',
        param: null,
        code: null,
      },
    }),
  );
}
