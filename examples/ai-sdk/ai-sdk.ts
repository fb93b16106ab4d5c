// forkcache in a Vercel AI SDK app: an agent with three tools of its own forks 20 children
// through `forkcache/ai-sdk`. The children start from the exact request the agent sent (kept
// by the provider's fetch), call the agent's own tools (their `execute`), and their reports
// come back as the fork tool's output; one ledger holds the agent's turns and the children's.
// Runs offline on the local emulator: `npx tsx ai-sdk.ts` in a project that has
// `npm install forkcache ai @ai-sdk/anthropic zod` (in this repository:
// `npx tsx --tsconfig examples/ai-sdk/tsconfig.json examples/ai-sdk/ai-sdk.ts`).
// With a real key, drop the emulator, and give both the engine and the provider your key.
import { createAnthropic } from '@ai-sdk/anthropic';
import { stepCountIs, ToolLoopAgent, tool } from 'ai';
import { ForkEngine } from 'forkcache';
import { startEmulator } from 'forkcache/testing';
import { createForkcache, type ForkToolOutput } from 'forkcache/ai-sdk';
import { z } from 'zod';

// The stand-in API; its `ai-sdk` script is an agent that calls the fork tool on `fork <n>: <task>`
// and, as a child, calls every tool the app declares.
const emulator = await startEmulator({ script: 'ai-sdk' });
const engine = await ForkEngine.create({ baseURL: emulator.url, apiKey: 'local', pool: { maxThreads: 2 } });
const forkcache = createForkcache({ engine });
const anthropic = createAnthropic({ baseURL: `${emulator.url}/v1`, apiKey: 'local', fetch: forkcache.fetch });

const calls = new Map<string, number>();
const count = (name: string): void => void calls.set(name, (calls.get(name) ?? 0) + 1);
const tools = {
  search_tickets: tool({
    description: 'Search the ticket tracker.',
    inputSchema: z.object({ query: z.string(), limit: z.number().int().min(3) }),
    execute: async ({ query }) => (count('search_tickets'), { tickets: [{ id: 'T-17', title: `${query}: login fails` }] }),
  }),
  lookup_user: tool({
    description: 'Look a user up by name.',
    inputSchema: z.object({ name: z.string() }),
    execute: async ({ name }) => (count('lookup_user'), `user ${name}: plan pro`),
  }),
  add_comment: tool({
    description: 'Add a comment to a ticket.',
    inputSchema: z.object({ ticket: z.string(), body: z.string() }),
    execute: async ({ ticket }) => (count('add_comment'), `comment added to ${ticket}`),
  }),
};

try {
  const agent = new ToolLoopAgent({
    model: anthropic('claude-sonnet-4-6'),
    instructions: 'You are a support engineer triaging tickets. '.repeat(300), // long enough to be cached
    tools: { ...tools, fork: forkcache.forkTool({ tools, readOnly: ['search_tickets', 'lookup_user'] }) },
    stopWhen: stepCountIs(4),
  });
  const result = await agent.generate({ prompt: 'fork 20: triage the open tickets' });
  const fork = result.steps.flatMap((s) => s.toolResults).find((r) => r.toolName === 'fork');
  const output = fork?.output as ForkToolOutput;
  const done = output.forks.filter((f) => f.status === 'completed').length;
  console.log(`forks: ${output.forks.length}, completed: ${done}, cache efficiency ${output.cacheEfficiency.toFixed(3)}`);
  console.log(`tool calls by the children: ${[...calls].map(([name, n]) => `${name} ${n}`).join(', ')}`);
  console.log(`agent: ${result.text.slice(0, 60)}…`);
  const tree = forkcache.ledger.summary('parent');
  console.log(
    `ledger: ${tree.requests} requests (the agent and its ${tree.forks.total} forks), ` +
      `cache read ${tree.usage.cache_read_input_tokens} tokens, cost $${tree.cost_usd.actual?.toFixed(4)} (no cache $${tree.cost_usd.no_cache?.toFixed(4)})`,
  );
  // The fan-out's cache efficiency against the request the agent itself sent, as the API
  // counted it: what the children's first requests read of it from the cache, over what they
  // could (all of it each, less the one write of what the agent's request left uncached).
  const records = forkcache.ledger.records();
  const own = records.find((r) => r.kind === 'parent')!.usage;
  const sent = own.input_tokens + own.cache_creation_input_tokens + own.cache_read_input_tokens;
  const firsts = records.filter((r) => r.kind === 'fork' && r.turn === 0);
  const read = firsts.reduce((sum, r) => sum + Math.min(r.usage.cache_read_input_tokens, sent), 0);
  const efficiency = read / (firsts.length * sent - own.input_tokens);
  console.log(
    `against the agent's own request (${sent} tokens): ${firsts.length} first requests read ${read} of it, efficiency ${efficiency.toFixed(3)}`,
  );
} finally {
  await engine.close();
  await emulator.close();
}
