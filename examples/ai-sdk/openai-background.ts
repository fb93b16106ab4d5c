// forkcache in a Vercel AI SDK app on OpenAI, in the background: the agent's fork tool answers
// at once with a run id, the agent ends its turn, the app collects the reports and hands them
// to the agent as a later message. The children start from the exact Chat Completions request
// the agent sent (kept by the provider's fetch) and call the agent's own tools.
// Runs offline on the local emulator's OpenAI mode: `npx tsx openai-background.ts` in a project
// that has `npm install forkcache ai @ai-sdk/openai zod` (in this repository:
// `npx tsx --tsconfig examples/ai-sdk/tsconfig.json examples/ai-sdk/openai-background.ts`).
import { createOpenAI } from '@ai-sdk/openai';
import { type ModelMessage, stepCountIs, ToolLoopAgent, tool } from 'ai';
import { ForkEngine } from 'forkcache';
import { startEmulator } from 'forkcache/testing';
import { createForkcache } from 'forkcache/ai-sdk';
import { z } from 'zod';

const emulator = await startEmulator({ api: 'openai', script: 'ai-sdk' });
const baseURL = `${emulator.url}/v1`;
// the engine speaks the app's wire: provider 'openai' (or 'dashscope', 'deepseek', 'openai-compatible')
const engine = await ForkEngine.create({ provider: 'openai', baseURL, apiKey: 'local', pool: { maxThreads: 2 } });
const forkcache = createForkcache({ engine });
const openai = createOpenAI({ baseURL, apiKey: 'local', fetch: forkcache.fetch });

const tools = {
  search_tickets: tool({
    description: 'Search the ticket tracker.',
    inputSchema: z.object({ query: z.string(), limit: z.number().int().min(3) }),
    execute: async ({ query }) => ({ tickets: [{ id: 'T-17', title: `${query}: login fails` }] }),
  }),
  lookup_user: tool({
    description: 'Look a user up by name.',
    inputSchema: z.object({ name: z.string() }),
    execute: async ({ name }) => `user ${name}: plan pro`,
  }),
  add_comment: tool({
    description: 'Add a comment to a ticket.',
    inputSchema: z.object({ ticket: z.string(), body: z.string() }),
    execute: async ({ ticket }) => `comment added to ${ticket}`,
  }),
};

try {
  const agent = new ToolLoopAgent({
    model: openai.chat('gpt-4.1'), // Chat Completions (openai(id) would be the Responses API)
    instructions: 'You are a support engineer triaging tickets. '.repeat(300),
    tools: { ...tools, fork: forkcache.forkTool({ tools, background: true }) },
    stopWhen: stepCountIs(4),
  });
  const messages: ModelMessage[] = [{ role: 'user', content: 'fork 10: triage the open tickets' }];
  const first = await agent.generate({ messages });
  console.log(`agent: ${first.text}`);
  console.log(`pending: ${forkcache.pending().map((p) => `${p.fanoutId} (${p.directives} forks)`).join(', ')}`);
  const outputs = await forkcache.collect();
  // the first turn's messages: `responseMessages` in ai 7 (its `response.messages` is the last step's), `response.messages` in ai 6
  const said = (first as { responseMessages?: ModelMessage[] }).responseMessages ?? first.response.messages;
  const history = [...messages, ...said, forkcache.reportMessage(outputs)];
  const later = await agent.generate({ messages: history });
  console.log(`agent, later (${history.length} messages in): ${later.text.slice(0, 50)}…`);
  const tree = forkcache.ledger.summary('parent');
  const turns = forkcache.ledger.records().filter((r) => r.kind === 'parent').length;
  console.log(
    `ledger: ${tree.requests} requests (the agent's ${turns} turns and its ${tree.forks.total} forks), ` +
      `cache efficiency ${tree.cache.cache_efficiency.toFixed(3)}, cost $${tree.cost_usd.actual?.toFixed(4)}`,
  );
} finally {
  await engine.close();
  await emulator.close();
}
