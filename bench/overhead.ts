import { rmSync } from 'node:fs';
import type Anthropic from '@anthropic-ai/sdk';
import pLimit from 'p-limit';
import { startEmulator, type Emulator } from '../src/integrations/emulator/start.ts';
import { SCRIPT_HEADER } from '../src/integrations/emulator/scripts/types.ts';
import { ForkEngine } from '../src/index.ts';
import { toAssistantParam } from '../src/core/loop/messages.ts';
import { DEFAULT_MAX_TOKENS } from '../src/core/loop/run-fork.ts';
import { childRequestBody } from '../src/core/prefix/body.ts';
import { freeze, type FrozenPrefix } from '../src/core/prefix/freeze.ts';
import { createAnthropicClient } from '../src/providers/anthropic/client.ts';
import { streamMessageBytes } from '../src/providers/anthropic/send.ts';
import { createToolExecutor, type ToolExecutor } from '../src/core/tools/executor.ts';
import { parentOfSize } from './support/parent.ts';
import { SURVEY_SCRIPT, SURVEY_TOOL_TURNS, surveyModel, surveyWorkspace } from './support/survey-model.ts';
import type { SuiteOptions, SuiteResult } from './types.ts';

const CONCURRENCY = 16;
const TURNS = SURVEY_TOOL_TURNS + 1;

/**
 * The same forks without forkcache: a `Promise.all` over the directives on the main thread,
 * at most `concurrency` forks at once, each sending exactly the engine's bodies (frozen head +
 * its suffix, the same moving marker) through the SDK and running the same tools in-thread.
 * The first fork's first request goes alone and siblings wait for its response to begin, as
 * the engine's default warm-first gate does, so that both arms send the same requests.
 */
async function plainFanOut(
  client: Anthropic,
  prefix: FrozenPrefix,
  directives: readonly string[],
  tools: ToolExecutor,
): Promise<void> {
  const limit = pLimit(CONCURRENCY);
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  let warmerTaken = false;
  await Promise.all(
    directives.map((directive) =>
      limit(async () => {
        const child = prefix.child(directive);
        const own: Anthropic.MessageParam[] = [...child.messages];
        for (let turn = 1; ; turn++) {
          const body = childRequestBody(
            prefix,
            { tailBlocks: child.tailBlocks, messages: own },
            { max_tokens: DEFAULT_MAX_TOKENS, stream: true },
          );
          const warmer = turn === 1 && !warmerTaken;
          if (warmer) warmerTaken = true;
          else if (turn === 1) await gate;
          const { message } = await streamMessageBytes(client, body, warmer ? { onStart: openGate } : {});
          own.push(toAssistantParam(message));
          const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
          if (uses.length === 0) return;
          const results: Anthropic.ToolResultBlockParam[] = [];
          for (const use of uses) {
            const result = await tools.execute(use.name, use.input);
            results.push({
              type: 'tool_result',
              tool_use_id: use.id,
              content: result.content,
              ...(result.isError ? { is_error: true } : {}),
            });
          }
          own.push({ role: 'user', content: results });
        }
      }),
    ),
  );
}

interface ArmRun {
  ms: number;
  /** CPU time of the whole process (every thread, user + system), ms. */
  cpuMs: number;
  requests: number;
  inputTokens: number;
}

/** Time one arm from a cold cache; count what reached the emulator. */
async function timed(emulator: Emulator, run: () => Promise<void>): Promise<ArmRun> {
  emulator.clearCache();
  const before = emulator.stats();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const after = emulator.stats();
  const input = (s: ReturnType<Emulator['stats']>): number =>
    s.tokens.uncached + s.tokens.cacheRead + s.tokens.cacheWrite;
  return {
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    requests: after.requests.messages - before.requests.messages,
    inputTokens: input(after) - input(before),
  };
}

/**
 * Suite 5, engine overhead: N forks × 3 turns on the emulator with latency off, through the
 * ForkEngine (2 worker threads, the frozen prefix, a gate round trip per request, the ledger)
 * and through a plain main-thread loop sending the same bodies at the same concurrency.
 * Both arms pay the emulator's own work (on the main thread) equally.
 */
export async function overheadSuite(options: SuiteOptions): Promise<SuiteResult> {
  const forks = options.quick ? 200 : 1000;
  const reps = 3;
  const emulator = await startEmulator({ latency: 'off', seed: 6, scripts: { [SURVEY_SCRIPT]: surveyModel } });
  const headers = { [SCRIPT_HEADER]: SURVEY_SCRIPT };
  const client = createAnthropicClient({
    baseURL: emulator.url,
    apiKey: 'bench',
    maxRetries: 0,
    defaultHeaders: headers,
  });
  const workspace = surveyWorkspace();
  const tools = createToolExecutor({ workspace });
  const engine = await ForkEngine.create({
    baseURL: emulator.url,
    apiKey: 'bench',
    headers,
    maxRetries: 0,
    workspace,
    concurrency: CONCURRENCY,
    pool: { maxThreads: 2, concurrentTasksPerWorker: CONCURRENCY / 2 },
  });
  const engineRuns: ArmRun[] = [];
  const plainRuns: ArmRun[] = [];
  let sharedTokens: number;
  try {
    const parent = await parentOfSize(client, 4_000, ['survey the repository and report']);
    sharedTokens = parent.sharedTokens;
    const prefix = freeze(parent.snapshot);
    const directives = (n: number, tag: string): string[] =>
      Array.from({ length: n }, (_, i) => `survey part ${i + 1} of ${n} and report (${tag})`);
    const viaEngine = async (list: string[]): Promise<void> => {
      const { forks: results } = await engine.fanOut(parent.snapshot, list).settled();
      const bad = results.find((f) => f.status !== 'completed' || f.turns !== TURNS);
      if (bad)
        throw new Error(
          `overhead: engine fork ${bad.forkId} ${bad.status} after ${bad.turns} turn(s): ${bad.error?.message ?? ''}`,
        );
    };
    // Warm-up, untimed: both threads started and the JIT warm; then the timed list once, so
    // that the emulator has memoized the token counts of every block both arms will send
    // (otherwise the first timed arm alone would pay for tokenizing them).
    const list = directives(forks, 'timed');
    await viaEngine(directives(32, 'warm-up'));
    await plainFanOut(client, prefix, list, tools);
    // Alternate which arm goes first, so that neither always inherits the other's garbage.
    for (let rep = 0; rep < reps; rep++) {
      const arms = [
        async () => engineRuns.push(await timed(emulator, () => viaEngine(list))),
        async () => plainRuns.push(await timed(emulator, () => plainFanOut(client, prefix, list, tools))),
      ];
      if (rep % 2 === 1) arms.reverse();
      for (const arm of arms) await arm();
    }
  } finally {
    await engine.close();
    await emulator.close();
    rmSync(workspace, { recursive: true, force: true });
  }
  for (const r of [...engineRuns, ...plainRuns]) {
    if (r.requests !== forks * TURNS || r.inputTokens !== engineRuns[0]!.inputTokens)
      throw new Error(
        `overhead: the arms did not send the same requests (${JSON.stringify({ engineRuns, plainRuns })})`,
      );
  }
  // Each rep runs both arms back to back: the machine's state (other processes on 2 cores,
  // the heap) drifts between reps more than between the two arms of one rep, so ratios are
  // taken per rep and the median rep is reported. Wall time answers "how fast"; CPU time (all
  // threads) measures the work the engine adds and is far less sensitive to other load.
  const median = (xs: number[]): number => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const turns = forks * TURNS;
  const paired = (pick: (r: ArmRun) => number): number =>
    median(engineRuns.map((r, i) => pick(r) / pick(plainRuns[i]!)));
  const wallRatio = paired((r) => r.ms);
  const cpuRatio = paired((r) => r.cpuMs);
  const cpuExtraPerTurn = median(engineRuns.map((r, i) => (r.cpuMs - plainRuns[i]!.cpuMs) / turns));
  const row = (arm: string, runs: ArmRun[], wall: number, cpu: number): Record<string, unknown> => {
    const ms = median(runs.map((r) => r.ms));
    return {
      arm,
      forks,
      turns,
      wall_s: Math.round(ms) / 1000,
      forks_per_s: Math.round((forks / ms) * 1000),
      wall_ms_per_turn: Math.round((ms / turns) * 1000) / 1000,
      cpu_ms_per_turn: Math.round((median(runs.map((r) => r.cpuMs)) / turns) * 1000) / 1000,
      wall_vs_plain: Math.round(wall * 100) / 100,
      cpu_vs_plain: Math.round(cpu * 100) / 100,
      runs_wall_s: runs.map((r) => (r.ms / 1000).toFixed(2)).join(' / '),
    };
  };
  const rows = [
    row('ForkEngine (2 threads)', engineRuns, wallRatio, cpuRatio),
    row('plain Promise.all', plainRuns, 1, 1),
  ];
  const conclusion =
    `Through the engine ${forks} forks × ${TURNS} turns ran at ${String(rows[0]!['forks_per_s'])} forks/s against ${String(rows[1]!['forks_per_s'])} for the plain loop ` +
    `(${wallRatio.toFixed(2)}× the wall time, median of ${reps} paired runs over a ${sharedTokens.toLocaleString('en-US')}-token prefix), and ` +
    (cpuExtraPerTurn >= 0
      ? `it adds ${cpuExtraPerTurn.toFixed(3)} ms of CPU per turn (${cpuRatio.toFixed(2)}× the plain loop's ${String(rows[1]!['cpu_ms_per_turn'])} ms, which includes the emulator's own work) for its worker threads, gate round trips and ledger.`
      : `it used ${(-cpuExtraPerTurn).toFixed(3)} ms less CPU per turn (${cpuRatio.toFixed(2)}× the plain loop's ${String(rows[1]!['cpu_ms_per_turn'])} ms).`);
  return {
    name: 'overhead',
    title: `Engine overhead (emulator, latency off, ${CONCURRENCY} forks at once; wall and CPU time)`,
    rows,
    conclusion,
  };
}
