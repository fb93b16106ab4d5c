import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkEngine } from '../../../../src/core/engine/engine.ts';
import { type BenchOptions, withBenchOptions } from '../../../../src/core/engine/bench-options.ts';
import type { ForkEngineOptions } from '../../../../src/core/engine/options.ts';
import type { FanOutResult } from '../../../../src/core/agent/fork-handle.ts';
import { llamaAvailability, type LlamaServer } from '../../../../scripts/llama/llama-server.ts';
import { captureSnapshot, type ParentSnapshot } from '../../../../src/core/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../../../../src/core/tools/declarations.ts';
import { fixture } from '../../../helpers.ts';

const available = llamaAvailability('tiny');
export const hasLlama = available.ok;
/** The title suffix of an integration test: where it runs, or why it was skipped (like the browser test). */
export const why = available.ok
  ? 'on the real llama-server'
  : `SKIPPED: ${available.why} (bash scripts/llama/setup.sh installs it)`;
if (!available.ok) console.warn(`test/providers/llama-cpp/llama-server: ${why}`);

/** One request as the server logged it: its slot, prompt tokens evaluated and their time, tokens generated. */
export interface LoggedTask {
  slot: number;
  task: number;
  promptTokens: number;
  promptMs: string;
  generated: number;
}

/** The server's own account of each request (`print_timing` lines of its log), in order. */
export function loggedTasks(log: string): LoggedTask[] {
  const prompts = new Map<string, { slot: number; task: number; tokens: number; ms: string }>();
  const out: LoggedTask[] = [];
  for (const m of log.matchAll(/id +(\d+) \| task (\d+) \| +prompt eval time = +([\d.]+) ms \/ +(\d+) tokens/g))
    prompts.set(m[2]!, { slot: Number(m[1]), task: Number(m[2]), tokens: Number(m[4]), ms: m[3]! });
  for (const m of log.matchAll(/id +(\d+) \| task (\d+) \| +eval time = +[\d.]+ ms \/ +(\d+) tokens/g)) {
    const p = prompts.get(m[2]!);
    if (p) out.push({ slot: p.slot, task: p.task, promptTokens: p.tokens, promptMs: p.ms, generated: Number(m[3]) });
  }
  return out;
}

/** The fixture parent on a local model id (unpriced), with a long system prompt and the real tools. */
export function localParent(tag: string, sentences = 150): ParentSnapshot {
  const request = fixture<Record<string, any>>('parent-request.json');
  request['model'] = 'local-gguf';
  request['system'][0].text = `${tag} ${'You are a careful engineer. '.repeat(sentences)}`;
  request['tools'] = TOOL_DECLARATIONS;
  return captureSnapshot(request);
}

/** A fan-out of `forks` forks of the big test parent against the server. */
export async function fanOutOn(
  server: LlamaServer,
  forks: number,
  { slotFill, ...options }: Partial<ForkEngineOptions> & BenchOptions = {},
): Promise<FanOutResult> {
  const engine = await ForkEngine.create(
    withBenchOptions<ForkEngineOptions>(
      {
        provider: 'llama-cpp',
        baseURL: server.baseURL,
        apiKey: 'sk-local',
        workspace: mkdtempSync(join(tmpdir(), 'fc-llama-')),
        // the random model writes noise: a few tokens show everything the cache does
        maxTokens: 4,
        // one request per fork (the cache is what is measured): a cut-off turn ends truncated
        maxTurns: 1,
        pool: { maxThreads: 1 },
        ...options,
      },
      slotFill === undefined ? {} : { slotFill },
    ),
  );
  try {
    const directives = Array.from({ length: forks }, (_, i) => `rename helper to util in src/file${i}.ts`);
    return await engine.fanOut(localParent(String(Date.now())), directives).settled();
  } finally {
    await engine.close();
  }
}

/** What the server's `/metrics` counts (prompt tokens it evaluated, tokens it generated). */
export async function metric(server: LlamaServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}
