import type OpenAI from 'openai';
import type { ProviderAdapter, ProviderConnection, ProviderFacts } from '../../core/engine/provider.ts';
import { cacheKeyOf, type ApiEndpoint, type ForkWire, type WirePrefix } from '../../core/loop/transport.ts';
import { driftCheckedFetch } from '../../core/prefix/drift.ts';
import type { ChatDialect } from '../../core/wire/chat-dialect.ts';
import type { ProviderId, ProviderWire } from '../../core/wire/providers.ts';
import { cachedClient, clientOptionsOf } from '../fork-wire.ts';
import { chatRequestBody } from './body.ts';
import { createChatClient } from './client.ts';
import { warmUpChatFanOut } from './fan-out-warmup.ts';
import { responsesRequestBody, streamResponsesBytes } from './responses.ts';
import { streamChatBytes } from './stream.ts';

/** What a Chat Completions provider's adapter is made of (`chatAdapter`; llama.cpp adds its slots). */
interface ChatAdapterParts {
  /** Sends one fork request on Chat Completions (llama.cpp: pinned to the permit's slot first). */
  send?: (
    client: OpenAI,
    body: Uint8Array,
    options: Parameters<ForkWire['transport']['send']>[1],
  ) => ReturnType<ForkWire['transport']['send']>;
}

/** What a Chat Completions provider declares: its facts, and its dialect. */
type ChatFacts = ProviderFacts & ProviderWire & { chat: ChatDialect };

/**
 * A provider that speaks Chat Completions (OpenAI, DashScope, DeepSeek, a vLLM or SGLang server):
 * the head in its dialect (`facts.chat`), sent through the `openai` SDK. A provider that also
 * speaks OpenAI's Responses API (`facts.responsesApi`) takes `wire: 'responses'`.
 */
export function chatAdapter(id: ProviderId, facts: ChatFacts, parts: ChatAdapterParts = {}): ProviderAdapter {
  const send = parts.send ?? streamChatBytes;
  const dialect = facts.chat;
  const responses = facts.responsesApi === true;
  const forkBody = (prefix: WirePrefix, wire: ApiEndpoint['wire'], cacheKey: string | undefined): ForkWire['body'] =>
    // the child's own marker is not sent on the Responses API: the implicit breakpoint covers its latest message
    responses && wire === 'responses'
      ? (child, perRequest) => responsesRequestBody(prefix, child, perRequest, cacheKey)
      : (child, perRequest, marker) => chatRequestBody(prefix, child, perRequest, { dialect, marker, cacheKey });
  return {
    id,
    ...facts,
    forkBody,
    openForkWire(api, prefix) {
      const onResponses = responses && api.wire === 'responses';
      const client = cachedClient(api, prefix, () =>
        createChatClient({
          provider: facts,
          ...clientOptionsOf(api),
          fetch: driftCheckedFetch({
            head: prefix.head,
            prefixId: prefix.sha256.slice(0, 16),
            path: onResponses ? '/responses' : '/chat/completions',
          }),
        }),
      );
      return {
        provider: id,
        body: forkBody(prefix, api.wire, cacheKeyOf(prefix.sha256)),
        transport: {
          send: onResponses
            ? (body, options) => streamResponsesBytes(client, body, options)
            : (body, options) => send(client, body, options),
        },
      };
    },
    connect: (api) => chatConnection(createChatClient({ ...api, provider: facts, defaultHeaders: api.headers })),
  };
}

/**
 * The engine's connection to a Chat Completions provider. The API has no token count: the
 * warm-up measures the shared prefix as it writes it (`warmUpChatFanOut`).
 */
export function chatConnection(client: OpenAI): ProviderConnection {
  return {
    withHeaders: (headers) => chatConnection(client.withOptions({ defaultHeaders: headers })),
    warmUp: async (run) => {
      await warmUpChatFanOut({
        client,
        prefix: run.prefix,
        forks: run.forks,
        warm: run.options.warm,
        gate: run.gate,
        accounts: run.accounts,
        clock: run.clock,
        log: run.log,
        signal: run.signal,
        spend: run.spend,
      });
      return {};
    },
  };
}

// Readability: DashScope and DeepSeek document that an entry is readable once its response is
// complete; OpenAI documents nothing, so it is treated the same. vLLM/SGLang cache a block as
// soon as it is allocated: siblings in one batch share it (`none`).

/** A dialect with no markers and `max_tokens`: the automatic-cache providers' (DeepSeek, vLLM, llama.cpp). */
export const PLAIN_CHAT: ChatDialect = { markers: false, maxTokensField: 'max_tokens', cacheKey: false, headers: {} };

/** OpenAI: automatic caching, hits reported in 128-token increments; also the Responses API. */
export const openaiAdapter = chatAdapter('openai', {
  readability: 'response-end',
  cacheStepTokens: 128,
  local: false,
  defaultModel: 'gpt-5',
  endpoint: {
    title: 'OpenAI',
    keyEnv: ['OPENAI_API_KEY'],
    baseUrlEnv: ['OPENAI_BASE_URL'],
    defaultBaseURL: 'https://api.openai.com/v1',
  },
  // newer models refuse `max_tokens`; `prompt_cache_key` routes one prefix to the same cache machines
  chat: { ...PLAIN_CHAT, maxTokensField: 'max_completion_tokens', cacheKey: true },
  responsesApi: true,
});
/** DashScope (Qwen): caches only at explicit `cache_control` markers; Qwen Code is its own agent. */
export const dashscopeAdapter = chatAdapter('dashscope', {
  readability: 'response-end',
  cacheStepTokens: 1,
  local: false,
  defaultModel: 'qwen3-coder-plus',
  endpoint: {
    title: 'DashScope',
    keyEnv: ['DASHSCOPE_API_KEY'],
    baseUrlEnv: ['DASHSCOPE_BASE_URL'],
    defaultBaseURL: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
  },
  // Qwen Code sends DashScope's cache header
  chat: { ...PLAIN_CHAT, markers: true, headers: { 'X-DashScope-CacheControl': 'enable' } },
  nativeLayout: 'qwen',
});
/** DeepSeek: automatic caching, prefixes stored in 64-token units. */
export const deepseekAdapter = chatAdapter('deepseek', {
  readability: 'response-end',
  cacheStepTokens: 64,
  local: false,
  defaultModel: 'deepseek-chat',
  endpoint: {
    title: 'DeepSeek',
    keyEnv: ['DEEPSEEK_API_KEY'],
    baseUrlEnv: ['DEEPSEEK_BASE_URL'],
    defaultBaseURL: 'https://api.deepseek.com/v1',
  },
  chat: PLAIN_CHAT,
});
/**
 * A local vLLM or SGLang server: automatic prefix caching in 16-token blocks (vLLM's default),
 * unpriced. `OPENAI_BASE_URL` names it; any key is accepted.
 */
export const openaiCompatibleAdapter = chatAdapter('openai-compatible', {
  readability: 'none',
  cacheStepTokens: 16,
  local: true,
  defaultModel: 'qwen3-coder-30b-a3b-instruct',
  endpoint: {
    title: 'vLLM/SGLang',
    keyEnv: ['OPENAI_API_KEY'],
    baseUrlEnv: ['OPENAI_BASE_URL'],
    defaultBaseURL: 'http://127.0.0.1:8000/v1',
  },
  chat: PLAIN_CHAT,
});
