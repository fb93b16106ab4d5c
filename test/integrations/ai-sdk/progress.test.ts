import { createAnthropic } from '@ai-sdk/anthropic';
import { stepCountIs, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForkcache, type ForkToolOutput, type ForkToolProgress } from '../../../src/ai-sdk.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import { appTools, INSTRUCTIONS } from './app-tools.ts';

// An AI SDK 6 app of the test's own that shows each child live: `streamText` hands it the fork
// tool's preliminary results (`tool-result` parts with `preliminary: true`) as the children
// start, call the app's tools, finish turns and end; the last result is the tool's output,
// which alone goes to the model.

const emulator = sharedEmulator({ script: 'ai-sdk' });
let engine: ForkEngine;
beforeAll(async () => {
  engine = await ForkEngine.create({
    baseURL: emulator.current.url,
    apiKey: 'test',
    workspace: workspace(),
    pool: { maxThreads: 2 },
  });
});
afterAll(() => engine?.close());

describe('forkcache/ai-sdk: the fork tool streams its progress', () => {
  it('an app renders per-child progress from the preliminary results, then gets the reports', async () => {
    const forkcache = createForkcache({ engine });
    const anthropic = createAnthropic({
      baseURL: `${emulator.current.url}/v1`,
      apiKey: 'test',
      fetch: forkcache.fetch,
    });
    const tools = appTools([]);
    const result = streamText({
      model: anthropic('claude-sonnet-4-6'),
      system: INSTRUCTIONS,
      prompt: 'fork 3: triage the open tickets',
      tools: { ...tools, fork: forkcache.forkTool({ tools }) },
      stopWhen: stepCountIs(3),
    });

    // the app's UI: one line per child, redrawn from each preliminary result
    const screens: string[][] = [];
    const events: string[] = [];
    let final: ForkToolOutput | undefined;
    for await (const part of result.fullStream) {
      if (part.type !== 'tool-result' || part.toolName !== 'fork') continue;
      // the AI SDK also passes the last value as a preliminary result before the final one
      if (part.preliminary && typeof part.output === 'object' && part.output !== null && 'event' in part.output) {
        const progress = part.output as ForkToolProgress;
        events.push(progress.event);
        screens.push(
          progress.forks.map(
            (f) => `fork ${f.fork}: ${f.status}, ${f.turns} turn(s)${f.lastTool ? `, last ${f.lastTool}` : ''}`,
          ),
        );
      } else if (!part.preliminary) final = part.output as ForkToolOutput;
    }

    // every child was seen starting, calling each of the app's tools, and ending
    for (const n of [1, 2, 3]) {
      expect(events).toContain(`fork ${n} started`);
      for (const name of ['search_tickets', 'lookup_user', 'add_comment'])
        expect(events).toContain(`fork ${n} called ${name}`);
      expect(events).toContain(`fork ${n} ended: completed`);
      // a child starts before its calls, which come before its end
      const at = (e: string): number => events.indexOf(`fork ${n} ${e}`);
      expect(at('started')).toBeLessThan(at('called search_tickets'));
      expect(at('called add_comment')).toBeLessThan(at('ended: completed'));
    }
    expect(screens[0]).toEqual(expect.arrayContaining([expect.stringMatching(/^fork \d: running, 0 turn\(s\)$/)]));
    expect(screens.at(-1)).toEqual([1, 2, 3].map((n) => expect.stringMatching(new RegExp(`^fork ${n}: completed, `))));

    // the final result is the output the model got: the three reports
    expect(final!.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'completed']);
    expect(await result.text).toContain('The children reported');
  });
});
