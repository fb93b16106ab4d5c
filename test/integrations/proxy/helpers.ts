import Anthropic from '@anthropic-ai/sdk';
import { afterEach } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import type { EmulatorOptions } from '../../../src/integrations/emulator/options.ts';
import { startProxy, type Proxy } from '../../../src/integrations/proxy/server.ts';
import type { ProxyOptions } from '../../../src/integrations/proxy/options.ts';

export const MODEL = 'claude-sonnet-4-6';
export const cc = { type: 'ephemeral' } as const;

const emulators: Emulator[] = [];
const proxies: Proxy[] = [];

/** An emulator with the default tokenizer (the one the proxy estimates with), latency off. */
export async function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emu = await startEmulator({ latency: 'off', minCacheableTokens: 10, ...options });
  emulators.push(emu);
  return emu;
}

export async function proxy(options: ProxyOptions): Promise<Proxy> {
  const p = await startProxy(options);
  proxies.push(p);
  return p;
}

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.destroy()));
  await Promise.all(emulators.splice(0).map((e) => e.destroy()));
});

export function sdk(baseURL: string, extra: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}): Anthropic {
  return new Anthropic({ apiKey: 'sk-ant-test-0123456789abcdef', baseURL, maxRetries: 0, ...extra });
}

/** `n` distinct words. */
export function words(n: number, tag = 'w'): string {
  return Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
}

/**
 * Yield to the event loop until `ready()` holds (explicit synchronisation: nothing waits for a
 * time window). A count of turns is no bound on a loaded machine (50,000 turns passed before a
 * request crossed a socket beside a full suite on Node 22), so the bound is a generous
 * wall-clock safety net; after the first turns it checks every few milliseconds, not spinning.
 */
export async function until(ready: () => boolean, what: string, safetyMs = 60_000): Promise<void> {
  const deadline = Date.now() + safetyMs;
  for (let turn = 0; Date.now() < deadline; turn++) {
    if (ready()) return;
    await new Promise((resolve) => (turn < 1_000 ? setImmediate(resolve) : setTimeout(resolve, 5)));
  }
  if (ready()) return;
  throw new Error(`never happened within ${safetyMs} ms: ${what}`);
}

/** A fan-out's request: a shared system + history with a marker on its last block, then one directive. */
export function childParams(
  shared: string,
  directive: string,
  stream: boolean,
): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model: MODEL,
    max_tokens: 64,
    system: [{ type: 'text', text: 'You are a fork.', cache_control: cc }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: shared, cache_control: cc },
          { type: 'text', text: directive, cache_control: cc },
        ],
      },
    ],
    ...(stream ? { stream: true } : {}),
  } as unknown as Anthropic.MessageCreateParamsNonStreaming;
}

/** Send through the SDK and read the answer to its end (a stream through `messages.stream`). */
export async function complete(
  client: Anthropic,
  params: Anthropic.MessageCreateParamsNonStreaming,
): Promise<Anthropic.Message> {
  if ((params as { stream?: boolean }).stream) {
    const { stream: _stream, ...rest } = params as Anthropic.MessageCreateParamsNonStreaming & { stream?: boolean };
    return client.messages.stream(rest).finalMessage();
  }
  return client.messages.create(params);
}
