import OpenAI, { APIError } from 'openai';
import { afterEach } from 'vitest';
import { startEmulator, type Emulator } from '../../../../src/integrations/emulator/start.ts';
import type { EmulatorOptions } from '../../../../src/integrations/emulator/options.ts';
import { wordTokenizer } from '../helpers.ts';

export { drive, waitForEvents, words, wordTokenizer } from '../helpers.ts';

const running: Emulator[] = [];

/** An OpenAI-compatible emulator for tests: latency off, one token per word, the provider's own minimum. */
export async function chatEmulator(
  api: 'openai' | 'dashscope' | 'deepseek',
  options: EmulatorOptions = {},
): Promise<Emulator> {
  const emu = await startEmulator({ api, latency: 'off', tokenizer: wordTokenizer, ...options });
  running.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.destroy()));
});

/** The real `openai` client at the provider's base URL on the emulator. */
export function chatClient(
  emu: Emulator,
  api: 'openai' | 'dashscope' | 'deepseek' = 'openai',
  extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {},
): OpenAI {
  const path = api === 'dashscope' ? '/compatible-mode/v1' : '/v1';
  return new OpenAI({ apiKey: 'test', baseURL: `${emu.url}${path}`, maxRetries: 0, ...extra });
}

/** The SDK error a promise rejects with. */
export async function openAiError(work: Promise<unknown>): Promise<APIError> {
  try {
    await work;
  } catch (err) {
    if (err instanceof APIError) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}

export const ephemeral = { type: 'ephemeral' } as const;

/** A text part, optionally marked (DashScope's explicit cache reads markers on parts only). */
export const part = (text: string, marked = false) => ({
  type: 'text' as const,
  text,
  ...(marked ? { cache_control: ephemeral } : {}),
});

/** Usage fields the SDK's types do not declare (DashScope's, DeepSeek's). */
export const usageOf = (completion: { usage?: unknown }): Record<string, any> =>
  completion.usage as Record<string, any>;
