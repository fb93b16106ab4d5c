// Embedding forkcache: an engine on the local emulator, one fan-out of six forks with live
// events, results and the ledger, then the agent tool inside a parent loop with one tree
// ledger that includes the parent's own turns. Runs offline: `npx tsx embed.ts` in a project
// that has `npm install forkcache @anthropic-ai/sdk` (in this repository:
// `npx tsx --tsconfig examples/embed/tsconfig.json examples/embed/embed.ts`).
// With a real key, drop the emulator and give `apiKey: process.env.ANTHROPIC_API_KEY`.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import {
  captureSnapshot,
  createToolExecutor,
  ForkEngine,
  runParentAgent,
  TOOL_DECLARATIONS,
  UsageLedger,
} from 'forkcache';
import { startEmulator } from 'forkcache/testing';

const MODEL = 'claude-opus-5-5';

// A small repository for the forks to edit: six files that use `fetchData`.
const workspace = mkdtempSync(join(tmpdir(), 'forkcache-embed-'));
mkdirSync(join(workspace, 'src'));
const callers = ['users', 'orders', 'invoices', 'products', 'search'].map((name) => `src/${name}.ts`);
for (const file of callers)
  writeFileSync(join(workspace, file), `import { fetchData } from './http';\n\nexport const load = () => fetchData('/${file}');\n`);
writeFileSync(join(workspace, 'src/http.ts'), 'export async function fetchData(url: string) {\n  return fetch(url);\n}\n');
const files = ['src/http.ts', ...callers];

// The stand-in API: real HTTP and SSE, the prompt-cache rules, a scripted model that acts on
// directives like "rename A to B in FILE". Any key works.
const emulator = await startEmulator({ script: 'refactor' });
const engine = await ForkEngine.create({
  baseURL: emulator.url,
  apiKey: 'local',
  workspace,
  runsDir: join(workspace, '.forkcache', 'runs'), // transcripts, for `forkcache resume` and `report`
  pool: { maxThreads: 2 },
});

try {
  // 1. A fan-out from a parent request, as the parent last sent it (captured by value).
  const snapshot = captureSnapshot({
    model: MODEL,
    max_tokens: 4096,
    system: 'You are a careful TypeScript engineer working in this repository.',
    tools: TOOL_DECLARATIONS, // forkcache's tool declarations: what the forks can run
    messages: [{ role: 'user', content: 'Rename fetchData to loadData in every file under src that uses it.' }],
  });
  const fan = engine.fanOut(
    snapshot,
    files.map((file) => `rename fetchData to loadData in ${file}`),
  );
  for await (const event of fan) {
    if (event.type === 'fork-start' || event.type === 'fork-end' || event.type === 'tool-call')
      console.log(`${event.forkId} ${event.type}${event.type === 'tool-call' ? ` ${event.name}` : ''}`);
  }
  const { forks, summary } = await fan.settled();
  for (const fork of forks) console.log(`${fork.forkId} ${fork.status}: ${fork.report?.result ?? fork.finalText}`);
  console.log(
    `cache efficiency ${summary.cache.cache_efficiency.toFixed(3)}, cost $${summary.cost_usd.actual?.toFixed(4)}` +
      ` (no cache $${summary.cost_usd.no_cache?.toFixed(4)})`,
  );
  const left = files.filter((file) => readFileSync(join(workspace, file), 'utf8').includes('fetchData'));
  console.log(`fetchData left: ${left.length === 0 ? 'none' : left.join(', ')}`);

  // 2. The agent tool in a parent loop: the parent's spawn calls fork; one ledger holds the
  // parent's turns and every fork's, so its summary is the whole tree's.
  const ledger = new UsageLedger();
  const agentTool = engine.agentTool({ parentId: 'parent', ledger });
  const parent = await runParentAgent({
    client: new Anthropic({ baseURL: emulator.url, apiKey: 'local' }),
    model: MODEL,
    system: 'You are a careful TypeScript engineer working in this repository.',
    tools: TOOL_DECLARATIONS,
    executor: createToolExecutor({ workspace }),
    agentTool,
    prompt: 'rename loadData to getData across src',
    onTurn: ({ turn, usage, sentAt }) =>
      ledger.record({ forkId: 'parent', kind: 'parent', turn: turn - 1, model: MODEL, usage, at: sentAt }),
  });
  const tree = ledger.summary('parent');
  console.log(`parent: ${parent.finalText.split('\n')[0]}`);
  console.log(
    `tree: ${tree.requests} requests (parent and ${tree.forks.total} forks), cost $${tree.cost_usd.actual?.toFixed(4)}`,
  );
} finally {
  await engine.close();
  await emulator.close();
}
