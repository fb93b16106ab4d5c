import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Clock } from '../../../../core/util/clock.ts';
import { outputMs, type LatencyProfile } from '../../latency.ts';
import type { BuiltOutput } from '../../server/output.ts';
import { jsonChunks, sseFrame, textChunks } from '../../server/sse.ts';
import { callId } from '../completion.ts';
import type { ResponsesCachePlan } from './cache.ts';

/** What the response object carries besides its output and usage (echoed from the request). */
export interface ResponseHead {
  id: string;
  created_at: number;
  model: string;
  instructions: string | null;
  tools: unknown[];
  tool_choice: unknown;
  prompt_cache_key: string | null;
  prompt_cache_options: { mode: 'implicit' | 'explicit'; ttl: string; prewarm?: true };
  /** `comparison_response_id`'s answer, when one was asked for. */
  prompt_cache_comparison?: unknown;
}

/** `usage` as the Responses API reports it: reads, writes by TTL, all parts of `input_tokens`. */
export function responsesUsage(plan: ResponsesCachePlan, outputTokens: number): Record<string, unknown> {
  const written = plan.creationTokens;
  return {
    input_tokens: plan.totalTokens,
    input_tokens_details: {
      cached_tokens: plan.cachedTokens,
      cache_write_tokens: written,
      cache_write_tokens_details: {
        ttl_30m_tokens: plan.ttl === '30m' ? written : 0,
        ttl_12h_tokens: plan.ttl === '12h' ? written : 0,
      },
    },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: plan.totalTokens + outputTokens,
  };
}

type OutputItem = Record<string, unknown> & { type: string; id: string };

/** The output items: one assistant message for the text, one `function_call` per tool call. */
function outputItems(head: ResponseHead, output: BuiltOutput): OutputItem[] {
  const items: OutputItem[] = [];
  const suffix = head.id.slice('resp_'.length);
  const text = output.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  if (text !== '')
    items.push({
      type: 'message',
      id: `msg_${suffix}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
  for (const block of output.content) {
    if (block.type !== 'tool_use') continue;
    items.push({
      type: 'function_call',
      id: `fc_${callId(block.id).slice('call_'.length)}`,
      call_id: callId(block.id),
      name: block.name,
      arguments: JSON.stringify(block.input),
      status: 'completed',
    });
  }
  return items;
}

/** The whole `object: "response"`; a cut by `max_output_tokens` is `incomplete`, as on the API. */
export function responseBody(
  head: ResponseHead,
  output: BuiltOutput | undefined,
  usage: Record<string, unknown> | null,
): Record<string, unknown> {
  const cut = output !== undefined && output.stopReason === 'max_tokens' && head.prompt_cache_options.prewarm !== true;
  return {
    id: head.id,
    object: 'response',
    created_at: head.created_at,
    status: usage === null ? 'in_progress' : cut ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: usage !== null && cut ? { reason: 'max_output_tokens' } : null,
    instructions: head.instructions,
    model: head.model,
    output: usage === null || output === undefined ? [] : outputItems(head, output),
    parallel_tool_calls: true,
    tool_choice: head.tool_choice,
    tools: head.tools,
    prompt_cache_key: head.prompt_cache_key,
    prompt_cache_options: head.prompt_cache_options,
    ...(head.prompt_cache_comparison === undefined ? {} : { prompt_cache_comparison: head.prompt_cache_comparison }),
    usage,
  };
}

interface ResponsesStreamOptions {
  clock: Clock;
  profile: LatencyProfile;
  signal: AbortSignal;
  usage: Record<string, unknown>;
  failMidStream: boolean;
  onTokens?: ((tokens: number) => void) | undefined;
}

/**
 * The SSE body of a streamed response, in the Responses event format: every frame has an
 * `event:` line and a `sequence_number`. `response.created` and `response.in_progress`, then per
 * output item `output_item.added`, its deltas (`output_text.delta`, or
 * `function_call_arguments.delta`) paced at the output rate and their `.done` events,
 * `output_item.done`, and last `response.completed` with the whole response and its usage. A
 * failure after the first delta is an `error` event (the stream-error fault).
 */
export async function streamResponse(
  res: ServerResponse,
  head: ResponseHead,
  output: BuiltOutput,
  options: ResponsesStreamOptions,
): Promise<void> {
  let sequence = 0;
  const send = async (type: string, data: Record<string, unknown>): Promise<void> => {
    if (!res.write(sseFrame(type, { type, sequence_number: sequence++, ...data })))
      await once(res, 'drain', { signal: options.signal });
  };
  const pace = async (tokens: number): Promise<void> => {
    const ms = outputMs(options.profile, tokens);
    if (ms > 0) await options.clock.sleep(ms, options.signal);
    options.onTokens?.(tokens);
  };
  const fail = (): void => {
    res.end(
      sseFrame('error', {
        type: 'error',
        sequence_number: sequence++,
        code: 'server_error',
        message: 'The server had an error while processing your request.',
        param: null,
      }),
    );
  };
  await send('response.created', { response: responseBody(head, undefined, null) });
  await send('response.in_progress', { response: responseBody(head, undefined, null) });
  const items = outputItems(head, output);
  const textTokens = output.content.reduce((n, b, i) => n + (b.type === 'text' ? (output.blockTokens[i] ?? 0) : 0), 0);
  for (const [index, item] of items.entries()) {
    if (item.type === 'message') {
      const text = (item['content'] as { text: string }[])[0]!.text;
      await send('response.output_item.added', {
        output_index: index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      const part = { type: 'output_text', text: '', annotations: [] };
      await send('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part });
      for (const piece of textChunks(text)) {
        await pace(text.length === 0 ? textTokens : (textTokens * piece.length) / text.length);
        await send('response.output_text.delta', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          delta: piece,
        });
        if (options.failMidStream) return fail();
      }
      await send('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text });
      await send('response.content_part.done', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: { ...part, text },
      });
    } else {
      const args = String(item['arguments']);
      const tokens =
        output.blockTokens[
          output.content.findIndex((b) => b.type === 'tool_use' && callId(b.id) === item['call_id'])
        ] ?? 0;
      await send('response.output_item.added', {
        output_index: index,
        item: { ...item, arguments: '', status: 'in_progress' },
      });
      for (const piece of jsonChunks(args)) {
        await pace((tokens * piece.length) / Math.max(1, args.length));
        await send('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: piece });
        if (options.failMidStream) return fail();
      }
      await send('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: args });
    }
    await send('response.output_item.done', { output_index: index, item });
  }
  if (options.failMidStream) return fail();
  const done = responseBody(head, output, options.usage);
  await send(done['status'] === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: done });
  res.end();
}
