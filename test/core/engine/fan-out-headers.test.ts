import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { findForkDirective } from '../../../src/integrations/emulator/scripts/conversation.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { startEmulator, type Emulator } from '../../../src/integrations/emulator/start.ts';
import { bigSnapshot, workspace } from './helpers.ts';

/*
 * A fan-out's own request headers (`FanOutOptions.headers`, what the AI SDK fork tool passes for
 * the app's betas) are sent by every request of the fan-out, and by its resume on an engine that
 * was not given them: the manifest keeps them.
 */

const schema = z.object({ ok: z.literal(true) });

/** Reports `{ok: true}` in part 1, and in part 2 only once `fixed` (before: `{ok: false}`, invalid_output). */
function model(): { model: ScriptedModel; state: { fixed: boolean } } {
  const state = { fixed: false };
  return {
    state,
    model: {
      name: 'fan-out-headers',
      respond({ request }) {
        const fork = findForkDirective(request.messages);
        const ok = !fork || /part 1/.test(fork.directive) || state.fixed;
        const text = `Scope: x\nResult:\n\`\`\`json\n${JSON.stringify({ ok })}\n\`\`\`\nKey files: none\nFiles changed: none\nIssues: none`;
        return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
      },
    },
  };
}

interface Logged {
  url: string;
  headers: Record<string, string | undefined>;
}

const logged = (dir: string): Logged[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { request: Logged }).request);

const open: { emu?: Emulator; engines: ForkEngine[] } = { engines: [] };
afterEach(async () => {
  for (const engine of open.engines.splice(0)) await engine.close();
  await open.emu?.close();
  delete open.emu;
});

describe("a fan-out's own request headers", () => {
  it('go with every request of the fan-out, and of its resume by an engine without them', async () => {
    const { model: scripted, state } = model();
    const logDir = mkdtempSync(join(tmpdir(), 'fc-fan-out-headers-'));
    open.emu = await startEmulator({ latency: 'off', scripts: [scripted], script: 'fan-out-headers', logDir });
    const ws = workspace();
    const engineOn = async (): Promise<ForkEngine> => {
      const engine = await ForkEngine.create({
        baseURL: open.emu!.url,
        apiKey: 'test',
        workspace: ws,
        runsDir: join(ws, 'runs'),
        pool: { maxThreads: 2 },
      });
      open.engines.push(engine);
      return engine;
    };
    const headers = { 'anthropic-beta': 'context-management-2025-06-27' };
    const first = await engineOn();
    const fan = first.fanOut(bigSnapshot('fan-out-headers'), ['part 1', 'part 2'], { headers, outputSchema: schema });
    expect((await fan.settled()).forks.map((f) => f.status)).toEqual(['completed', 'invalid_output']);
    const sent = logged(logDir);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    for (const r of sent) expect(r.headers['anthropic-beta'], r.url).toBe(headers['anthropic-beta']);

    // another fan-out of the same engine, without them: the engine's own headers only
    const plain = first.fanOut(bigSnapshot('fan-out-headers plain'), ['part 1']);
    await plain.settled();
    const plainSent = logged(logDir).slice(sent.length);
    expect(plainSent.length).toBeGreaterThan(0);
    for (const r of plainSent) expect(r.headers['anthropic-beta'], r.url).toBeUndefined();

    state.fixed = true;
    const before = logged(logDir).length;
    const resumed = await (await engineOn()).resume(join(ws, 'runs', fan.id), { retry: ['invalid_output'] }).settled();
    expect(resumed.forks.map((f) => f.status)).toEqual(['completed', 'completed']);
    const again = logged(logDir).slice(before);
    expect(again.length).toBeGreaterThan(0);
    for (const r of again) expect(r.headers['anthropic-beta'], r.url).toBe(headers['anthropic-beta']);
  });
});
