import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAnthropic } from '@ai-sdk/anthropic';
import { stepCountIs, ToolLoopAgent } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { createForkcache, type ForkToolOutput } from '../../../src/ai-sdk.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { readManifest } from '../../../src/core/run-dir/manifest.ts';
import { workspace } from '../../core/engine/helpers.ts';
import { appTools, INSTRUCTIONS } from './app-tools.ts';

/*
 * What an AI SDK app's request carries that changes what the model does goes to its children:
 * `@ai-sdk/anthropic` sends the app's betas as `anthropic-beta`, and every request forkcache
 * sends for the children (warm-up, token counts, each turn) carries that header as the app's
 * did. Seen where it matters: in the emulator's exchange log, as the API received them.
 */

interface Logged {
  url: string;
  headers: Record<string, string | undefined>;
  body: unknown;
}

function exchanges(dir: string): Logged[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { request: Logged }).request);
}

const open: { emu?: Emulator; engine?: ForkEngine } = {};
afterEach(async () => {
  await open.engine?.close();
  await open.emu?.close();
  delete open.engine;
  delete open.emu;
});

describe("forkcache/ai-sdk: the children keep the app's request headers that change the model", () => {
  it("every child request carries the app's anthropic-beta header, as the app's request sent it", async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'fc-ai-sdk-beta-'));
    open.emu = await startEmulator({ script: 'ai-sdk', latency: 'off', logDir });
    // the engine knows nothing of the app's betas: they come from the app's own request
    const ws = workspace();
    open.engine = await ForkEngine.create({
      baseURL: open.emu.url,
      apiKey: 'test',
      workspace: ws,
      runsDir: join(ws, 'runs'),
      pool: { maxThreads: 2 },
    });
    const forkcache = createForkcache({ engine: open.engine });
    const betas = 'context-management-2025-06-27,effort-2025-11-24';
    const anthropic = createAnthropic({
      baseURL: `${open.emu.url}/v1`,
      apiKey: 'test',
      headers: { 'anthropic-beta': betas },
      fetch: forkcache.fetch,
    });
    const tools = appTools([]);
    const agent = new ToolLoopAgent({
      model: anthropic('claude-sonnet-4-6'),
      instructions: INSTRUCTIONS,
      tools: { ...tools, fork: forkcache.forkTool({ tools }) },
      stopWhen: stepCountIs(4),
    });
    const result = await agent.generate({ prompt: 'fork 3: triage the open tickets' });
    const output = result.steps[0]!.toolResults.find((r) => r.toolName === 'fork')!.output as ForkToolOutput;
    expect(output.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed']);

    const logged = exchanges(logDir);
    const appRequest = logged.find((r) => !JSON.stringify(r.body).includes('fork-boilerplate'))!;
    // what the app's provider sent (the header the children must repeat): the app's betas and the provider's own
    const sent = appRequest.headers['anthropic-beta']!;
    expect(sent.split(',')).toEqual(expect.arrayContaining(betas.split(',')));
    const children = logged.filter((r) => JSON.stringify(r.body).includes('fork-boilerplate'));
    expect(children.length).toBeGreaterThanOrEqual(3 * 4);
    for (const child of children) expect(child.headers['anthropic-beta'], child.url).toBe(sent);
    // the engine's own requests of the fan-out (its token counts of the shared head) carry it too
    const counts = logged.filter((r) => r.url.includes('count_tokens'));
    expect(counts.length).toBeGreaterThan(0);
    for (const count of counts) expect(count.headers['anthropic-beta'], count.url).toBe(sent);
    // kept for resume with the engine's headers (a resumed child is sent as the first run's were)
    expect(readManifest(join(ws, 'runs', output.fanoutId)).engine.headers).toEqual({ 'anthropic-beta': sent });
  });

  it("refuses a fan-out's headers that are not strings, naming the field, before anything runs", async () => {
    open.emu = await startEmulator({ script: 'ai-sdk', latency: 'off' });
    const ws = workspace();
    open.engine = await ForkEngine.create({
      baseURL: open.emu.url,
      apiKey: 'test',
      workspace: ws,
      pool: { maxThreads: 1 },
    });
    const parent = captureSnapshot({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }] });
    const headers = { 'anthropic-beta': 1 } as unknown as Record<string, string>;
    expect(() => open.engine!.fanOut(parent, ['a'], { headers })).toThrow(/fanOut options\.headers: anthropic-beta/);
    expect(open.emu.stats().requests.total).toBe(0);
  });
});
