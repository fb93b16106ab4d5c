import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  approximateTokenizer,
  claudeTokenizer,
  scaledTokenizer,
  type Tokenizer,
} from '../../../src/integrations/emulator/tokens/tokenizer.ts';
import { MODEL, cc, client, emulator, wordTokenizer, words } from './helpers.ts';

describe('tokenizers', () => {
  it('counts with the Claude BPE', () => {
    expect(claudeTokenizer.count('')).toBe(0);
    expect(claudeTokenizer.count('hello world')).toBe(2);
    const code = readFileSync(new URL('../../../src/integrations/emulator/cache/plan.ts', import.meta.url), 'utf8');
    const perToken = code.length / claudeTokenizer.count(code);
    expect(perToken).toBeGreaterThan(2.5);
    expect(perToken).toBeLessThan(5);
  });

  it('offers an approximate and a scaled tokenizer', () => {
    expect(approximateTokenizer.count('abcdefghi')).toBe(3);
    expect(scaledTokenizer(wordTokenizer, 1.5).count('a b c d')).toBe(6);
    expect(() => scaledTokenizer(wordTokenizer, 0)).toThrow(/factor must be a positive finite number/);
  });
});

describe('token counting in the emulator', () => {
  it('tokenizes each block once: a repeated prefix is not re-tokenized', async () => {
    const seen: string[] = [];
    const spy: Tokenizer = { count: (text) => (seen.push(text), wordTokenizer.count(text)) };
    const emu = await emulator({ tokenizer: spy });
    const api = client(emu);
    const big = words(500, 'prefix');
    const params = {
      model: MODEL,
      max_tokens: 10,
      system: [{ type: 'text' as const, text: big, cache_control: cc }],
      messages: [{ role: 'user' as const, content: 'q1' }],
    };
    await api.messages.create(params);
    const blocks = emu.stats().cache.tokenizedBlocks;
    const before = seen.filter((t) => t === big).length;
    await api.messages.create({ ...params, messages: [{ role: 'user', content: 'q2' }] });
    expect(seen.filter((t) => t === big).length).toBe(before);
    expect(emu.stats().cache.tokenizedBlocks).toBe(blocks + 1);
  });

  it('answers count_tokens with the whole prompt, including the tool-use system prompt and images', async () => {
    const api = client(await emulator({ tokenCosts: { toolPromptTokens: 346, imageTokens: 1600 } }));
    const messages = [{ role: 'user' as const, content: 'one two three' }];
    expect(await api.messages.countTokens({ model: MODEL, system: 'four five', messages })).toEqual({
      input_tokens: 5,
    });
    const withTool = await api.messages.countTokens({
      model: MODEL,
      messages,
      tools: [{ name: 'x', description: 'does x', input_schema: { type: 'object' } }],
    });
    expect(withTool.input_tokens).toBe(
      3 +
        346 +
        wordTokenizer.count(JSON.stringify({ name: 'x', description: 'does x', input_schema: { type: 'object' } })),
    );
    const image = await api.messages.countTokens({
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'text', text: 'what is it' },
          ],
        },
      ],
    });
    expect(image.input_tokens).toBe(1603);
  });

  it('uses the Claude BPE by default, consistently between count_tokens and usage', async () => {
    const api = client(await emulator({ tokenizer: claudeTokenizer, minCacheableTokens: 1 }));
    const params = {
      model: MODEL,
      messages: [{ role: 'user' as const, content: 'The quick brown fox jumps over the lazy dog.' }],
    };
    const { input_tokens } = await api.messages.countTokens(params);
    expect(input_tokens).toBe(claudeTokenizer.count('The quick brown fox jumps over the lazy dog.'));
    expect((await api.messages.create({ ...params, max_tokens: 5 })).usage.input_tokens).toBe(input_tokens);
  });
});
