// Type tests: compiled by `npm run typecheck` (tsc), never run. An AI SDK 6 app's fork tool with
// an output schema: the tool's result, as the AI SDK types it, holds each child's value as the
// schema's output type; without a schema it is `unknown`.
import { type InferToolOutput, type Tool, tool } from 'ai';
import { expectTypeOf } from 'vitest';
import { z } from 'zod';
import { createForkcache, type ForkToolOutput } from '../../src/ai-sdk.ts';
import type { ForkEngine } from '../../src/core/engine/engine.ts';

declare const engine: ForkEngine;
const forkcache = createForkcache({ engine });
const lookup = tool({
  description: 'Look a user up by name.',
  inputSchema: z.object({ name: z.string() }),
  execute: async ({ name }) => `user ${name}`,
});
const triage = z.object({ ticket: z.string(), priority: z.enum(['low', 'high']).default('low') });
const tools = { lookup, fork: forkcache.forkTool({ tools: { lookup }, outputSchema: triage }) };

// the fork tool is an AI SDK tool, and the AI SDK infers its result from its execute
expectTypeOf(tools.fork).toExtend<Tool<{ directives: string[] }, unknown>>();
type Result = InferToolOutput<typeof tools.fork>;
type Final = Extract<Result, { cacheEfficiency: number }>;
expectTypeOf<Final>().toEqualTypeOf<ForkToolOutput<{ ticket: string; priority: 'low' | 'high' }>>();
// the schema's output (the default applied), never its input
expectTypeOf<Final['forks'][number]['output']>().toEqualTypeOf<
  { ticket: string; priority: 'low' | 'high' } | undefined
>();

// without a schema: nothing to know of a child's value
const plain = forkcache.forkTool({ tools: { lookup } });
expectTypeOf(plain).toExtend<Tool<{ directives: string[] }, unknown>>();
expectTypeOf<Parameters<typeof plain.execute>[0]>().toEqualTypeOf<{ directives: string[] }>();
type PlainFinal = Extract<InferToolOutput<typeof plain>, { cacheEfficiency: number }>;
expectTypeOf<PlainFinal['forks'][number]['output']>().toEqualTypeOf<unknown>();
