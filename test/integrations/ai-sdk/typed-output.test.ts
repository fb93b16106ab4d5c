import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createForkcache, type ForkToolOutput } from '../../../src/ai-sdk.ts';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { findForkDirective, lastUserText } from '../../../src/integrations/emulator/scripts/conversation.ts';
import { OUTPUT_INVALID_TAG } from '../../../src/core/wire/fork-text.ts';
import { sharedEmulator, workspace } from '../../core/engine/helpers.ts';
import { appTools, INSTRUCTIONS } from './app-tools.ts';
import { typedOutputModel } from './typed-model.ts';

// Typed fork results through an AI SDK 6 app of the test's own: the fork tool has an output
// schema (zod 4); three children answer on the real emulator, scripted (./typed-model.ts): one
// with a matching value, one that matches only after its repair turn, one that never matches.

const triage = z.object({ ticket: z.string(), priority: z.enum(['low', 'high']) });

const { model: typedModel, seen } = typedOutputModel();

const emulator = sharedEmulator({ scripts: [typedModel], script: 'typed-output' });
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

describe('forkcache/ai-sdk: typed fork results', () => {
  it('validates each report with the schema: a match, a match after one repair turn, invalid_output', async () => {
    const forkcache = createForkcache({ engine });
    const anthropic = createAnthropic({
      baseURL: `${emulator.current.url}/v1`,
      apiKey: 'test',
      fetch: forkcache.fetch,
    });
    const tools = appTools([]);
    const result = await generateText({
      model: anthropic('claude-sonnet-4-6'),
      system: INSTRUCTIONS,
      prompt: 'fork 3: triage the open tickets',
      tools: { ...tools, fork: forkcache.forkTool({ tools, outputSchema: triage }) },
      stopWhen: stepCountIs(3),
    });
    const call = result.steps.flatMap((s) => s.toolResults).find((r) => r.toolName === 'fork');
    const output = call?.output as ForkToolOutput<z.infer<typeof triage>>;

    expect(output.forks.map((f) => f.status)).toEqual(['completed', 'completed', 'invalid_output']);
    expect(output.forks[0]!.output).toEqual({ ticket: 'T-1', priority: 'high' });
    expect(output.forks[1]!.output).toEqual({ ticket: 'T-2', priority: 'low' });
    expect(output.forks[2]).not.toHaveProperty('output');

    // each child was shown the schema (zod's JSON Schema) after its directive
    const first = seen.find((r) => findForkDirective(r.messages)?.directive.includes('part 1 of 3'));
    expect(findForkDirective(first!.messages)!.directive).toContain('"enum":["low","high"]');

    // per child: its requests in the ledger (0 the tool call, 1 the report, 2 the repair's answer)
    const records = forkcache.ledger.records().filter((r) => r.kind === 'fork');
    const turnsOf = (fork: string) => records.filter((r) => r.forkId === fork).sort((a, b) => a.turn - b.turn);
    const [one, two, three] = output.forks.map((f) => turnsOf(f.forkId));
    expect(one!.map((r) => r.turn)).toEqual([0, 1]);
    expect(two!.map((r) => r.turn)).toEqual([0, 1, 2]);
    // one repair turn, no more: the third child ends after it
    expect(three!.map((r) => r.turn)).toEqual([0, 1, 2]);
    for (const turns of [two!, three!]) {
      const [, report, repair] = turns;
      const sent = (r: typeof report) =>
        r!.usage.input_tokens + r!.usage.cache_creation_input_tokens + r!.usage.cache_read_input_tokens;
      // the repair turn continues the child's own conversation: it reads all the report turn sent from the cache
      expect(repair!.usage.cache_read_input_tokens).toBeGreaterThan(0);
      expect(repair!.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(sent(report));
    }
    // the repair turn quoted the validation errors, naming the field
    const repairs = seen
      .map((r) => lastUserText(r.messages)?.text ?? '')
      .filter((t) => t.startsWith(`<${OUTPUT_INVALID_TAG}>`));
    expect(repairs).toHaveLength(2);
    expect(repairs.some((t) => t.includes('ticket:'))).toBe(true);
    expect(repairs.some((t) => t.includes('priority:'))).toBe(true);
  });

  it('refuses an output schema that is not a Standard Schema, naming the field', () => {
    const forkcache = createForkcache({ engine });
    expect(() => forkcache.forkTool({ tools: {}, outputSchema: { type: 'object' } as never })).toThrow(
      /outputSchema: expected a Standard Schema/,
    );
    expect(() => engine.fanOut(undefined, ['x'], { outputSchema: { type: 'object' } as never })).toThrow(
      /outputSchema: expected a Standard Schema/,
    );
  });
});
