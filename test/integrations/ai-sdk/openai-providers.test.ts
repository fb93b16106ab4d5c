import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { stepCountIs, streamText, ToolLoopAgent } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { createForkcache, type ForkToolOutput } from '../../../src/ai-sdk.ts';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import type { ProviderId } from '../../../src/core/wire/providers.ts';
import { workspace } from '../../core/engine/helpers.ts';
import { type AppToolCall, appTools, INSTRUCTIONS } from './app-tools.ts';

/** A DashScope message without forkcache's markers, a one-part text content as the string it renders as. */
function unmarked(value: unknown): unknown {
  const text = JSON.parse(JSON.stringify(value).replace(/,"cache_control":\{"type":"ephemeral"\}/g, '')) as Record<
    string,
    unknown
  >;
  const content = text['content'];
  if (
    Array.isArray(content) &&
    content.length === 1 &&
    content[0].type === 'text' &&
    Object.keys(content[0]).length === 2
  )
    return { ...text, content: content[0].text };
  return text;
}

/** The request bodies the emulator received, in arrival order (its exchange log). */
function exchangeBodies(dir: string): Record<string, unknown>[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map(
      (f) =>
        (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { request: { body: Record<string, unknown> } }).request.body,
    );
}

const open: { emu?: Emulator; engine?: ForkEngine } = {};
afterEach(async () => {
  await open.engine?.close();
  await open.emu?.close();
  delete open.engine;
  delete open.emu;
});

interface Case {
  name: string;
  api: 'openai' | 'dashscope';
  provider: ProviderId;
  forks: number;
  /**
   * A message or tool as the provider reads it: on OpenAI the JSON exactly; on DashScope
   * forkcache adds its markers (the system message then in array form, one text part).
   */
  same(value: unknown): string;
  /** The app's model through the real provider package, its fetch forkcache's. */
  model(baseURL: string, fetch: typeof globalThis.fetch): LanguageModel;
}

const cases: Case[] = [
  {
    name: '@ai-sdk/openai (Chat Completions) on the emulator’s OpenAI mode',
    api: 'openai',
    provider: 'openai',
    forks: 20,
    same: (value) => JSON.stringify(value),
    model: (baseURL, fetch) => createOpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'test', fetch }).chat('gpt-4.1'),
  },
  {
    name: '@ai-sdk/openai-compatible on the emulator’s DashScope mode',
    api: 'dashscope',
    provider: 'dashscope',
    forks: 8,
    same: (value) => JSON.stringify(unmarked(value)),
    model: (baseURL, fetch) =>
      createOpenAICompatible({ name: 'dashscope', baseURL: `${baseURL}/compatible-mode/v1`, apiKey: 'test', fetch })(
        'qwen3-coder-plus',
      ),
  },
];

describe('forkcache/ai-sdk on the OpenAI-compatible providers', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.forks} children fork from the app’s request and call its three tools`, async () => {
      const logDir = mkdtempSync(join(tmpdir(), 'fc-ai-sdk-log-'));
      open.emu = await startEmulator({ api: c.api, script: 'ai-sdk', latency: 'off', logDir });
      const baseURL = c.api === 'dashscope' ? `${open.emu.url}/compatible-mode/v1` : `${open.emu.url}/v1`;
      open.engine = await ForkEngine.create({
        provider: c.provider,
        baseURL,
        apiKey: 'test',
        workspace: workspace(),
        pool: { maxThreads: 2 },
      });
      // what the app sent, and what forkcache sent, as the emulator received it
      const sent: { url: string; body: Record<string, unknown> }[] = [];
      const tap: typeof globalThis.fetch = (input, init) => {
        if (typeof init?.body === 'string') sent.push({ url: String(input), body: JSON.parse(init.body) });
        return globalThis.fetch(input, init);
      };
      const forkcache = createForkcache({ engine: open.engine, fetch: tap });
      const calls: AppToolCall[] = [];
      const tools = appTools(calls);
      const agent = new ToolLoopAgent({
        model: c.model(open.emu.url, forkcache.fetch),
        instructions: INSTRUCTIONS,
        tools: { ...tools, fork: forkcache.forkTool({ tools, readOnly: ['search_tickets', 'lookup_user'] }) },
        stopWhen: stepCountIs(4),
      });
      const result = await agent.generate({ prompt: `fork ${c.forks}: triage the open tickets` });
      const output = result.steps[0]!.toolResults.find((r) => r.toolName === 'fork')!.output as ForkToolOutput;
      expect(output.forks.map((f) => f.status)).toEqual(Array.from({ length: c.forks }, () => 'completed'));
      for (const fork of output.forks) expect(fork.report).toContain('add_comment → comment added to triage');
      for (const name of ['search_tickets', 'lookup_user', 'add_comment'])
        expect(calls.filter((call) => call.tool === name)).toHaveLength(c.forks);
      expect(calls.every((call) => call.aborts)).toBe(true);
      expect(result.text).toContain('The children reported');

      // The children's prefix is the app's request: its tools and messages, each the same JSON,
      // and the assistant turn that called the tool as the app itself sent it one turn later.
      const [first, second] = sent.map((s) => s.body);
      const shared = [...(first!['messages'] as unknown[]), (second!['messages'] as unknown[])[2]];
      const forkBodies = exchangeBodies(logDir).filter((b) => JSON.stringify(b).includes('fork-boilerplate'));
      expect(forkBodies.length).toBeGreaterThanOrEqual(c.forks);
      for (const body of forkBodies) {
        expect((body['tools'] as unknown[]).map(c.same)).toEqual((first!['tools'] as unknown[]).map(c.same));
        expect((body['messages'] as unknown[]).slice(0, shared.length).map(c.same)).toEqual(shared.map(c.same));
      }
      const children = forkcache.ledger.records().filter((r) => r.kind === 'fork' && r.turn === 0);
      expect(children).toHaveLength(c.forks);

      // Cache efficiency against the app's own request: each child's first request reads what
      // that request sent (its prompt), and the fan-out as a whole is ≥ 0.99.
      const parentRecord = forkcache.ledger.records().find((r) => r.kind === 'parent')!;
      const parentPrompt =
        parentRecord.usage.input_tokens +
        parentRecord.usage.cache_read_input_tokens +
        parentRecord.usage.cache_creation_input_tokens;
      expect(parentPrompt).toBeGreaterThan(1024);
      for (const child of children)
        expect(child.usage.cache_read_input_tokens / parentPrompt, child.forkId).toBeGreaterThanOrEqual(0.99);
      expect(output.cacheEfficiency).toBeGreaterThanOrEqual(0.99);

      // One ledger: the app's own turns, once each, and every child's.
      const summary = forkcache.ledger.summary('parent');
      expect(summary.agents).toMatchObject({ parent: 1, fork: c.forks });
      expect(forkcache.ledger.records().filter((r) => r.kind === 'parent')).toHaveLength(2);
      expect(summary.forks.completed).toBe(c.forks);
    });
  }

  it('streamText: the streamed answer that called the tool is read back from its chunks', async () => {
    open.emu = await startEmulator({ api: 'openai', script: 'ai-sdk', latency: 'off' });
    open.engine = await ForkEngine.create({
      provider: 'openai',
      baseURL: `${open.emu.url}/v1`,
      apiKey: 'test',
      workspace: workspace(),
      pool: { maxThreads: 2 },
    });
    const forkcache = createForkcache({ engine: open.engine });
    const calls: AppToolCall[] = [];
    const tools = appTools(calls);
    const stream = streamText({
      model: createOpenAI({ baseURL: `${open.emu.url}/v1`, apiKey: 'test', fetch: forkcache.fetch }).chat('gpt-4.1'),
      system: INSTRUCTIONS,
      prompt: 'fork 3: triage the open tickets',
      tools: { ...tools, fork: forkcache.forkTool({ tools }) },
      stopWhen: stepCountIs(3),
    });
    expect(await stream.text).toContain('The children reported');
    const steps = await stream.steps;
    const output = steps[0]!.toolResults.find((r) => r.toolName === 'fork')!.output as ForkToolOutput;
    expect(output.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed']);
    expect(calls).toHaveLength(9);
    expect(output.cacheEfficiency).toBeGreaterThanOrEqual(0.99);
    // the streamed usage (its last chunk) is the parent's, once per request
    const parents = forkcache.ledger.records().filter((r) => r.kind === 'parent');
    expect(parents).toHaveLength(2);
    expect(parents[0]!.usage.input_tokens).toBeGreaterThan(1024);
  });

  it('refuses to fork a Chat request onto a Messages engine, naming engine.provider', async () => {
    open.emu = await startEmulator({ api: 'openai', script: 'ai-sdk', latency: 'off' });
    open.engine = await ForkEngine.create({ baseURL: open.emu.url, apiKey: 'test', workspace: workspace() });
    const forkcache = createForkcache({ engine: open.engine });
    const tools = appTools([]);
    const agent = new ToolLoopAgent({
      model: createOpenAI({ baseURL: `${open.emu.url}/v1`, apiKey: 'test', fetch: forkcache.fetch }).chat('gpt-4.1'),
      instructions: INSTRUCTIONS,
      tools: { ...tools, fork: forkcache.forkTool({ tools }) },
      stopWhen: stepCountIs(3),
    });
    const result = await agent.generate({ prompt: 'fork 2: triage the open tickets' });
    const error = result.steps[0]!.content.find((p) => p.type === 'tool-error');
    expect(String((error as { error?: unknown } | undefined)?.error)).toMatch(/engine\.provider: .*Chat Completions/);
    expect(forkcache.ledger.summary().forks.total).toBe(0);
  });
});
