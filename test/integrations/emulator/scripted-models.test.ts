import type Anthropic from '@anthropic-ai/sdk';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ReplayModel } from '../../../src/integrations/emulator/scripts/replay.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { DIRECTIVE_PREFIX, FORK_BOILERPLATE_CLOSE, FORK_BOILERPLATE_OPEN } from '../../../src/core/wire/fork-text.ts';
import { MODEL, apiError, client, emulator } from './helpers.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/emulator/${name}`, import.meta.url));
const ask = (content: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model: MODEL,
  max_tokens: 500,
  messages: [{ role: 'user', content }],
});
const text = (m: Anthropic.Message) => (m.content[0] as Anthropic.TextBlock).text;

describe('echo model', () => {
  it('reports what it received, in the fork report fields', async () => {
    const api = client(await emulator());
    expect(text(await api.messages.create(ask('hello there\nsecond line')))).toBe(
      `Scope: hello there\nResult: echo: 1 message(s), 0 tool(s) declared, model ${MODEL}\nKey files: none\nFiles changed: none\nIssues: none`,
    );
    const fork = await api.messages.create(
      ask(`${FORK_BOILERPLATE_OPEN}\nrules\n${FORK_BOILERPLATE_CLOSE}\n\n${DIRECTIVE_PREFIX}check the tests`),
    );
    expect(text(fork)).toMatch(/^Scope: check the tests\nResult: .*fork child/);
  });
});

describe('replay model', () => {
  const run = async (replay: ReplayModel) => {
    const api = client(await emulator({ scripts: [replay] }));
    const headers = { headers: { 'x-forkcache-script': 'replay' } };
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'please summarize notes.md' }];
    const tools: Anthropic.Tool[] = [{ name: 'read_file', input_schema: { type: 'object' } }];
    const first = await api.messages.create({ model: MODEL, max_tokens: 500, tools, messages }, headers);
    return { api, headers, tools, messages, first };
  };

  it('plays the fixture turns in order with deterministic ids', async () => {
    const replay = ReplayModel.fromFile(fixture('replay-two-turns.json'));
    const { api, headers, tools, messages, first } = await run(replay);
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content[1] as Anthropic.ToolUseBlock;
    expect(call).toMatchObject({
      name: 'read_file',
      input: { path: 'notes.md' },
      id: expect.stringMatching(/^toolu_01/),
    });
    messages.push({ role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '- a\n- b\n- c' }] });
    const second = await api.messages.create({ model: MODEL, max_tokens: 500, tools, messages }, headers);
    expect(text(second)).toBe('The notes list three open items.');
    expect(replay.remaining).toBe(0);
    expect(() => replay.assertConsumed()).not.toThrow();
  });

  it('fails loudly on an unexpected call, a failed expectation, or unconsumed turns', async () => {
    const replay = ReplayModel.fromFile(fixture('replay-two-turns.json'));
    const { api, headers } = await run(replay);
    expect(() => replay.assertConsumed()).toThrow(expect.objectContaining({ code: 'EMULATOR_REPLAY_UNCONSUMED' }));
    const err = await apiError(api.messages.create(ask('something else'), headers));
    expect(err.status).toBe(500);
    expect(err.headers?.get('x-should-retry')).toBe('false');
    expect(err.apiMessage).toContain('call #2: expected 3 message(s), got 1');
    expect(replay.failures).toHaveLength(1);
    expect(() => replay.assertConsumed()).toThrow(expect.objectContaining({ code: 'EMULATOR_REPLAY_MISMATCH' }));
    const done = new ReplayModel({ turns: [{ content: [{ type: 'text', text: 'only' }] }] }, { name: 'once' });
    const api2 = client(await emulator({ scripts: [done], script: 'once' }));
    await api2.messages.create(ask('a'));
    expect((await apiError(api2.messages.create(ask('b')))).apiMessage).toContain(
      'unexpected call #2, the fixture has only 1 turn(s)',
    );
  });

  it('rejects an invalid fixture, naming the bad paths', () => {
    expect(() => ReplayModel.fromFile(fixture('replay-invalid.json'))).toThrow(/turns\[1\]\.content\[0\]\.name/);
    expect(() => ReplayModel.fromFile(fixture('no-such-file.json'))).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});

describe('script selection', () => {
  it('picks the script per request by header, else the default', async () => {
    const fixed: ScriptedModel = {
      name: 'fixed',
      respond: () => ({ content: [{ type: 'text', text: 'fixed answer' }] }),
    };
    const api = client(await emulator({ scripts: { fixed } }));
    expect(text(await api.messages.create(ask('hi')))).toMatch(/^Scope: hi/);
    expect(text(await api.messages.create(ask('hi'), { headers: { 'x-forkcache-script': 'fixed' } }))).toBe(
      'fixed answer',
    );
    const err = await apiError(api.messages.create(ask('hi'), { headers: { 'x-forkcache-script': 'nope' } }));
    expect(err.status).toBe(400);
    expect(err.apiMessage).toContain(
      'unknown scripted model "nope" (known: echo, refactor, claude-code, host-tools, ai-sdk, hostile, fixed)',
    );
  });

  it('turns a throwing or malformed script into a 500 naming the script', async () => {
    const boom: ScriptedModel = {
      name: 'boom',
      respond: () => {
        throw new Error('kaput');
      },
    };
    const junk = { name: 'junk', respond: () => ({ content: [{ type: 'picture' }] }) } as unknown as ScriptedModel;
    const api = client(await emulator({ scripts: [boom, junk] }));
    expect(
      (await apiError(api.messages.create(ask('x'), { headers: { 'x-forkcache-script': 'boom' } }))).apiMessage,
    ).toBe('scripted model "boom" failed: kaput');
    expect(
      (await apiError(api.messages.create(ask('x'), { headers: { 'x-forkcache-script': 'junk' } }))).apiMessage,
    ).toContain('invalid turn');
  });

  it('rejects an unknown default script at start', async () => {
    await expect(emulator({ script: 'nope' })).rejects.toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});
