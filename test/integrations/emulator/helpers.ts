import Anthropic, { APIError } from '@anthropic-ai/sdk';
import type { ManualClock } from '../../../src/core/util/clock.ts';
import { afterEach } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import type { EmulatorEvent } from '../../../src/integrations/emulator/server/core.ts';
import type { EmulatorOptions } from '../../../src/integrations/emulator/options.ts';
import type { Tokenizer } from '../../../src/integrations/emulator/tokens/tokenizer.ts';

/** One token per whitespace-separated word: makes expected counts easy to write by hand. */
export const wordTokenizer: Tokenizer = {
  name: 'words',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
};

/** `n` distinct words (distinct so that no two test texts collide by accident). */
export function words(n: number, tag = 'w'): string {
  return Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
}

export const MODEL = 'claude-sonnet-4-6';

const running: Emulator[] = [];

/**
 * An emulator for tests: latency off, word tokenizer, no hidden token costs, a small minimum
 * cacheable length (10) unless overridden. Closed after each test.
 */
export async function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emu = await startEmulator({
    latency: 'off',
    tokenizer: wordTokenizer,
    tokenCosts: { toolPromptTokens: 0, imageTokens: 0 },
    minCacheableTokens: 10,
    ...options,
  });
  running.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.destroy()));
});

export function client(emu: Emulator, extra: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}): Anthropic {
  return new Anthropic({ apiKey: 'test', baseURL: emu.url, maxRetries: 0, ...extra });
}

/** Resolves after `count` events of `name` (explicit synchronisation, never a timer). */
export function waitForEvents(
  emu: Emulator,
  name: 'request-start' | 'response-start' | 'request-end',
  count = 1,
): Promise<EmulatorEvent[]> {
  return new Promise((resolve) => {
    const seen: EmulatorEvent[] = [];
    const off = emu.on(name, (event) => {
      seen.push(event);
      if (seen.length === count) {
        off();
        resolve(seen);
      }
    });
  });
}

/** POST raw JSON (for what the SDK will not send: missing headers, bad bodies). */
export async function rawPost(
  emu: Emulator,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${emu.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test', 'anthropic-version': '2023-06-01', ...headers },
    body,
  });
}

export const cc = { type: 'ephemeral' } as const;
export const cc1h = { type: 'ephemeral', ttl: '1h' } as const;

/**
 * Run `work` to completion on a ManualClock: yield to the event loop (I/O), and whenever the
 * emulator is parked on the clock, move time on by `stepMs`. No wall-clock waiting.
 */
export async function drive<T>(clock: ManualClock, work: Promise<T>, stepMs = 1000, maxSteps = 20_000): Promise<T> {
  let done = false;
  work.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; !done && i < maxSteps; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    if (clock.pending > 0) clock.advance(stepMs);
  }
  return work;
}

/** The SDK error a promise rejects with. */
export async function apiError(work: Promise<unknown>): Promise<APIError> {
  try {
    await work;
  } catch (err) {
    if (err instanceof APIError) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}
