import { z } from 'zod';
import { ForkcacheError } from '../util/errors.ts';
import type { ChatDialect } from './chat-dialect.ts';

/**
 * The providers forkcache speaks are the ones src/providers/registry.ts names, one line each;
 * core names none of them. The registry fills this interface in (`declare module`), which is
 * where `ProviderId` gets its ids from: a new provider's folder and its registry line make its
 * id a `ProviderId` everywhere, in the types and in every schema that reads one.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by src/providers/registry.ts
export interface ProviderRegister {}

/** A provider's id, as the registry names it (`anthropic`, `openai`, `llama-cpp`, …). */
export type ProviderId = ProviderRegister extends { providers: infer P } ? keyof P & string : string;

/** The provider of a fan-out, a plan or a manifest that names none (every run before providers existed). */
export const DEFAULT_PROVIDER: ProviderId = 'anthropic';

/**
 * What core's lower rooms (the frozen head, the options, the endpoint check) read of a
 * provider: how it speaks and where it is. Its adapter (`ProviderAdapter`,
 * core/engine/provider.ts) is these and the rest.
 */
export interface ProviderWire {
  /**
   * How this provider speaks Chat Completions (its dialect: markers, the output limit's name,
   * headers). Absent: the provider speaks Anthropic's Messages API.
   */
  readonly chat?: ChatDialect | undefined;
  /** OpenAI's Responses API is spoken beside Chat Completions (`openaiWire: 'responses'`). */
  readonly responsesApi?: boolean | undefined;
  /** Where the provider's API is and which environment variables say so. */
  readonly endpoint: ProviderEndpoint;
}

/** A provider's API endpoint, and the environment variables that name it and its key. */
export interface ProviderEndpoint {
  /** The provider's name in messages ("the DeepSeek API at …"). */
  readonly title: string;
  /** The key's variables, the first set one wins. */
  readonly keyEnv: readonly string[];
  /** The base URL's variables (a local server is named by one: `OPENAI_BASE_URL`). */
  readonly baseUrlEnv: readonly string[];
  /** The public endpoint, or a local server's usual address. */
  readonly defaultBaseURL: string;
}

let registered: Readonly<Record<string, ProviderWire>> | undefined;

/** The registry's providers, as `useProviders` (core/engine/providers-registered.ts) hands core the adapters. */
export function registerProviderWires(wires: Readonly<Record<string, ProviderWire>>): void {
  registered = wires;
}

function registeredWires(): Readonly<Record<string, ProviderWire>> {
  if (!registered)
    throw new ForkcacheError(
      'INTERNAL',
      'no provider adapters: import forkcache from its entry (the package, or src/index.ts), which hands core src/providers/registry.ts',
    );
  return registered;
}

/** The ids of the providers handed to core (`useProviders`), in the registry's order. */
export function providerIds(): readonly ProviderId[] {
  return Object.keys(registeredWires()) as ProviderId[];
}

/** How `provider` speaks and where it is; an id no adapter has is refused, naming `field` and the ids there are. */
export function providerWireOf(provider: ProviderId, field = 'provider'): ProviderWire {
  const wires = registeredWires();
  const wire = Object.hasOwn(wires, provider) ? wires[provider] : undefined;
  if (!wire)
    throw new ForkcacheError(
      'INVALID_OPTION',
      `${field}: expected one of ${Object.keys(wires).join(', ')}, got "${String(provider)}"`,
      { data: { field } },
    );
  return wire;
}

/** The first of `names` set to a non-empty value (an empty variable is unset: `KEY=` clears it). */
function firstSet(names: readonly string[]): string | undefined {
  return names.find((name) => Boolean(process.env[name]));
}

/**
 * A provider's base URL and key as the environment gives them (its default URL when none is
 * set), and the variable the base URL came from (`baseUrlFrom`: undefined for the default).
 */
export function endpointFromEnv(endpoint: ProviderEndpoint): {
  baseURL: string;
  apiKey: string | undefined;
  baseUrlFrom: string | undefined;
} {
  const baseUrlFrom = firstSet(endpoint.baseUrlEnv);
  const keyFrom = firstSet(endpoint.keyEnv);
  return {
    baseURL: baseUrlFrom ? process.env[baseUrlFrom]! : endpoint.defaultBaseURL,
    apiKey: keyFrom ? process.env[keyFrom] : undefined,
    baseUrlFrom,
  };
}

/**
 * A provider id, checked against the registered providers as it is read (not as the schema is
 * built: the schemas that use it are built before an entry hands core its providers, and a
 * registry handed over later is the one that counts).
 */
export const providerIdSchema = z.string().refine((id) => providerIds().includes(id as ProviderId), {
  error: () => `expected one of ${providerIds().join(', ')}`,
}) as z.ZodType<ProviderId>;

/**
 * When a request's cache writes become readable by a sibling, which is what the warm-first
 * gate waits for: `response-start` (Anthropic: once `message_start` arrives), `response-end`
 * (DashScope and DeepSeek document it; OpenAI documents nothing, so it is treated the same),
 * `none` (vLLM/SGLang cache a block as soon as it is allocated: siblings in one batch share it).
 * llama.cpp holds a prompt in the slot that computed it once the request is done (`response-end`);
 * its fan-out also fills every slot before releasing siblings (src/providers/llama-cpp/slot-fill.ts).
 */
export type Readability = 'response-start' | 'response-end' | 'none';

/**
 * The APIs OpenAI serves a fan-out on: `chat` (Chat Completions, the default, as every
 * OpenAI-compatible provider) or `responses` (the Responses API, OpenAI's own: explicit
 * breakpoints, `prompt_cache_options` with a 30-minute or 12-hour TTL and `prewarm`).
 */
export const OPENAI_WIRES = ['chat', 'responses'] as const;
export type OpenAiWire = (typeof OPENAI_WIRES)[number];

/**
 * A cached prefix of `tokens` as a provider with a cache step of `step` tokens can read it:
 * rounded down to the step (`ProviderFacts.cacheStepTokens`: llama.cpp matches per token, its
 * step is 1: a byte changed 5 characters before the end of a 2,046-token prefix still reads 2,041).
 */
export function stepDown(step: number, tokens: number): number {
  return Math.floor(tokens / step) * step;
}
