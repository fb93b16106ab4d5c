import type Anthropic from '@anthropic-ai/sdk';
import { claudeTokenizer } from '../../integrations/emulator/tokens/tokenizer.ts';
import { measureFreshBase, measureSharedTokens } from '../../providers/anthropic/measure.ts';
import type { ForkChild } from '../../core/fork/layouts.ts';
import { FORK_FALLBACK_SYSTEM_PROMPT } from '../../core/fork/fallback.ts';
import { childRequestObject } from '../../core/prefix/body.ts';
import type { FrozenPrefix } from '../../core/prefix/freeze.ts';
import { createAnthropicClient } from '../../providers/anthropic/client.ts';
import { countTokensBytes } from '../../providers/anthropic/send.ts';
import { PROVIDERS } from '../../providers/registry.ts';
import { DEFAULT_CACHE_TTL } from '../../core/wire/cache.ts';
import { TOOL_DECLARATIONS } from '../../core/tools/declarations.ts';
import type { ProviderId } from '../../core/wire/providers.ts';

/** What a dry run counts before it estimates: the only requests it sends are token counts. */
export interface DryRunCounts {
  /** P: the frozen shared prefix. */
  shared: number;
  /** F: the fresh agents' system prompt + tools. */
  freshHead: number;
  /** D of each fork: its part of its first request (the wrapped directive). */
  directives: number[];
  /** Tokens per character of the files' text. */
  perChar: number;
  /** How they were had: `count_tokens` at the endpoint, or an estimate (and why). */
  how: string;
  /** Token-count requests sent. */
  requests: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const PROBE = 'x';

/** Each fork's own bytes of its first request: what its directive adds to the head (in the head's wire format). */
function suffixBytes(prefix: FrozenPrefix, children: readonly ForkChild[], maxTokens: number): number[] {
  const perRequest = { max_tokens: maxTokens, stream: true };
  const body = PROVIDERS[prefix.provider].forkBody(prefix, prefix.responses ? 'responses' : undefined, undefined);
  // a Chat provider's suffix with the head's marker; Anthropic's with the default one
  const marker = PROVIDERS[prefix.provider].chat ? prefix.ttl : DEFAULT_CACHE_TTL;
  return children.map((child) => body(child, perRequest, marker).byteLength - prefix.byteLength);
}

/** Count on the provider's endpoint (`POST /v1/messages/count_tokens`: the emulator has it too). */
async function counted(
  client: Anthropic,
  prefix: FrozenPrefix,
  children: readonly ForkChild[],
  sample: string,
  maxTokens: number,
): Promise<Omit<DryRunCounts, 'how'> | undefined> {
  const shared = await measureSharedTokens(client, prefix);
  const freshHead = await measureFreshBase(client, prefix.snapshot);
  if (shared === undefined || freshHead === undefined) return undefined;
  const { max_tokens: _m, stream: _s, ...first } = childRequestObject(prefix.shared, children[0]!, { max_tokens: 1 });
  const firstTokens = await countTokensBytes(client, encoder.encode(JSON.stringify(first)));
  const message = (content: string): Uint8Array =>
    encoder.encode(JSON.stringify({ model: prefix.snapshot.model, messages: [{ role: 'user', content }] }));
  const probe = await countTokensBytes(client, message(PROBE));
  const text = sample === '' ? 0 : (await countTokensBytes(client, message(sample))) - probe;
  // without a file to sample, 0.3 tokens a character: about what code and prose count to
  // one directive counted exactly, the others in proportion to their bytes (one request, not N)
  const bytes = suffixBytes(prefix, children, maxTokens);
  const d0 = Math.max(0, firstTokens - shared);
  return {
    shared,
    freshHead,
    directives: bytes.map((b) => Math.round((d0 * b) / Math.max(1, bytes[0]!))),
    perChar: sample === '' ? 0.3 : Math.max(0, text) / sample.length,
    requests: (prefix.headEnd === 'content-open' ? 1 : 2) + 3 + (sample === '' ? 0 : 1),
  };
}

/** Without a count endpoint: the Claude BPE tokenizer on the same text (an estimate; it says so). */
function estimated(
  prefix: FrozenPrefix,
  children: readonly ForkChild[],
  sample: string,
  maxTokens: number,
): Omit<DryRunCounts, 'how'> {
  const tokens = (text: string): number => claudeTokenizer.count(text);
  const bytes = suffixBytes(prefix, children, maxTokens);
  const perByte = tokens(decoder.decode(prefix.head)) / Math.max(1, prefix.byteLength);
  return {
    shared: tokens(decoder.decode(prefix.head)),
    freshHead: tokens(JSON.stringify({ system: FORK_FALLBACK_SYSTEM_PROMPT, tools: TOOL_DECLARATIONS })),
    directives: bytes.map((b) => Math.round(b * perByte)),
    perChar: sample === '' ? 0.3 : tokens(sample) / sample.length,
    requests: 0,
  };
}

/** Count P, F, each D and the files' tokens per character, the provider's way where it has one. */
export async function dryRunCounts(run: {
  prefix: FrozenPrefix;
  children: readonly ForkChild[];
  sample: string;
  maxTokens: number;
  provider: ProviderId;
  endpoint: { baseURL: string; apiKey: string; label: string; headers?: Record<string, string> };
}): Promise<DryRunCounts> {
  const { prefix, children, sample, maxTokens, provider, endpoint } = run;
  if (PROVIDERS[provider].chat) {
    return {
      ...estimated(prefix, children, sample, maxTokens),
      how: `estimated with the Claude BPE tokenizer: ${provider} has no token-count endpoint`,
    };
  }
  const client = createAnthropicClient({
    baseURL: endpoint.baseURL,
    apiKey: endpoint.apiKey,
    maxRetries: 2,
    timeoutMs: 60_000,
    ...(endpoint.headers ? { defaultHeaders: endpoint.headers } : {}),
  });
  const exact = await counted(client, prefix, children, sample, maxTokens).catch(() => undefined);
  if (exact) return { ...exact, how: `counted by count_tokens at ${endpoint.label}` };
  return {
    ...estimated(prefix, children, sample, maxTokens),
    how: `estimated with the Claude BPE tokenizer: count_tokens at ${endpoint.label} did not answer`,
  };
}
