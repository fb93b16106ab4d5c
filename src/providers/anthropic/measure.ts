import type Anthropic from '@anthropic-ai/sdk';
import { FORK_FALLBACK_SYSTEM_PROMPT } from '../../core/fork/fallback.ts';
import type { ParentSnapshot } from '../../core/fork/snapshot.ts';
import type { FrozenPrefix } from '../../core/prefix/freeze.ts';
import { withSuffix } from '../../core/prefix/body.ts';
import { countTokensBytes, sendMessageBytes } from './send.ts';
import { TOOL_DECLARATIONS } from '../../core/tools/declarations.ts';

const encoder = new TextEncoder();
const PROBE_MESSAGE = '{"role":"user","content":"x"}';

/**
 * The head as a complete request that stops at the shared boundary: what a pre-warm sends
 * and what `count_tokens` measures. With no shared history a one-token user message stands
 * in (the API needs one message).
 */
export function closedHeadBody(prefix: FrozenPrefix, extra: Record<string, unknown> = {}): Uint8Array {
  const close = prefix.headEnd === 'content-open' ? ']}]' : `${PROBE_MESSAGE}]`;
  const fields = Object.entries(extra)
    .map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join('');
  return withSuffix(prefix.head, `${close}${fields}}`);
}

/**
 * Exact tokens of the shared prefix (for the ledger's `max_fanout_reads`), from the API's own
 * count. Undefined when counting fails: the run goes on, the metric is then unavailable.
 */
export async function measureSharedTokens(
  client: Anthropic,
  prefix: FrozenPrefix,
  signal?: AbortSignal,
): Promise<number | undefined> {
  try {
    const total = await countTokensBytes(client, closedHeadBody(prefix), { signal });
    if (prefix.headEnd === 'content-open') return total;
    const probe = await countTokensBytes(
      client,
      encoder.encode(`{"model":${JSON.stringify(prefix.snapshot.model)},"messages":[${PROBE_MESSAGE}]}`),
      { signal },
    );
    return Math.max(0, total - probe);
  } catch {
    return undefined;
  }
}

/**
 * Input tokens of a fresh agent before its directive: the fork agent's fallback system prompt
 * and the registry's tools (the `fresh_agents` baseline). Undefined when counting fails.
 */
export async function measureFreshBase(
  client: Anthropic,
  snapshot: ParentSnapshot,
  signal?: AbortSignal,
): Promise<number | undefined> {
  try {
    const body = {
      model: snapshot.model,
      system: FORK_FALLBACK_SYSTEM_PROMPT,
      tools: TOOL_DECLARATIONS,
      messages: [{ role: 'user', content: 'x' }],
    };
    return await countTokensBytes(client, encoder.encode(JSON.stringify(body)), { signal });
  } catch {
    return undefined;
  }
}

/**
 * The same input estimated where no endpoint counts tokens (Chat Completions): the fallback
 * prompt and tools' bytes at the tokens per byte the warm-up measured on the shared prefix.
 */
export function estimateFreshBase(tokensPerByte: number): number {
  const bytes = encoder.encode(
    JSON.stringify({ system: FORK_FALLBACK_SYSTEM_PROMPT, tools: TOOL_DECLARATIONS }),
  ).byteLength;
  return Math.round(bytes * tokensPerByte);
}

/** `max_tokens: 0` request of the head: writes the shared entry without generating anything. */
export async function sendPrewarm(
  client: Anthropic,
  prefix: FrozenPrefix,
  onStart: () => void,
  signal?: AbortSignal,
): Promise<Anthropic.Message> {
  const { message } = await sendMessageBytes(client, closedHeadBody(prefix, { max_tokens: 0 }), { onStart, signal });
  return message;
}
