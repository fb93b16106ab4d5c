import { BUILTIN_CATALOGUE, type ModelCatalogue } from '../../models/catalogue.ts';
import { DEFAULT_MODEL } from '../../models/defaults.ts';
import { isChatProvider, PROVIDER_DEFAULT_MODELS, type ProviderId } from '../../wire/providers.ts';
import { demoWire, emulatorApiOf } from './provider-wire.ts';
import { join } from 'node:path';
import { startEmulator } from '../../emulator/start.ts';
import { ForkEngine } from '../../engine/engine.ts';
import type { FanOut, FanOutResult } from '../../engine/fan-out.ts';
import { runParentAgent } from '../../agent/parent-agent.ts';
import { UsageLedger } from '../../ledger/ledger.ts';
import { createAnthropicClient } from '../../provider/client.ts';
import { TOOL_DECLARATIONS } from '../../tools/declarations.ts';
import { createToolExecutor } from '../../tools/executor.ts';
import type { WarmStrategy } from '../../engine/warm-gate.ts';
import type { LatencyName } from '../../emulator/latency.ts';
import { ProgressBoard } from '../progress-board.ts';
import { DEMO_SYSTEM_PROMPT } from './system-prompt.ts';
import { DEMO_NEW_NAME, DEMO_OLD_NAME, filesMentioning, prepareDemoWorkspace } from './workspace.ts';

export const DEMO_MODEL = DEFAULT_MODEL;

/** The demo's model on a provider (the Anthropic default, else the provider's catalogue row). */
export function demoModelOf(provider: ProviderId): string {
  return isChatProvider(provider) ? PROVIDER_DEFAULT_MODELS[provider] : DEMO_MODEL;
}

export interface DemoOptions {
  /** Called with each fan-out as it starts (e.g. to cancel it on Ctrl-C). */
  watch?: (fan: FanOut) => void;
  /** The engine, once created (Ctrl-C stops its stuck forks). */
  onEngine?: (engine: ForkEngine) => void;
  forks: number;
  warm: WarmStrategy;
  latency: LatencyName;
  seed: number;
  /** Plain progress lines instead of the live board. */
  plain: boolean;
  log: (line: string) => void;
  /** The model (default DEMO_MODEL) and the catalogue that prices it (default built-in). */
  model?: string | undefined;
  catalogue?: ModelCatalogue | undefined;
  /** The wire (default `anthropic`): the embedded emulator runs in that provider's mode. */
  provider?: ProviderId | undefined;
  /**
   * A local engine's API root (`…/v1`: llama-server, vLLM, SGLang): the forks run there; the
   * parent agent stays the emulator's scripted one (it decides the fan-out, which a model the
   * user runs may not do), and its emulated turns are left out of the ledger.
   */
  forksBaseURL?: string | undefined;
  /** Each fork turn's output limit (default the engine's). */
  maxTokens?: number | undefined;
}

export interface DemoResult {
  workspace: string;
  result: FanOutResult;
  parentTurns: number;
  parentText: string;
  /** Files under src/ still using the old name after the run (expected: none). */
  leftovers: string[];
}

/**
 * The demo: a parent agent (the emulator's scripted `refactor` model) surveys a copy of the
 * sample repository and forks one child per file to rename `fetchData` to `loadData`; the
 * children edit the files for real, through worker threads, on one frozen prefix.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const workspace = prepareDemoWorkspace(options.forks);
  const provider = options.provider ?? 'anthropic';
  const model = options.model ?? demoModelOf(provider);
  const catalogue = options.catalogue ?? BUILTIN_CATALOGUE;
  const emulator = await startEmulator({
    latency: options.latency,
    seed: options.seed,
    script: 'refactor',
    modelTable: catalogue,
    api: emulatorApiOf(provider),
  });
  const headers = { 'x-forkcache-script': 'refactor' };
  const wire = demoWire(provider, emulator.url, headers);
  const real = options.forksBaseURL;
  options.log(
    real
      ? `forkcache demo: ${options.forks} forks on ${real} (${provider}, ${wire.layout} layout, warm ${options.warm}); the parent agent is the embedded emulator's scripted one`
      : `forkcache demo: ${options.forks} forks on the local emulator (${provider === 'anthropic' ? '' : `${provider} mode, ${wire.layout} layout, `}latency ${options.latency}, warm ${options.warm}), no API key needed`,
  );
  options.log(`workspace ${workspace}`);
  const engine = await ForkEngine.create({
    modelTable: catalogue,
    provider,
    baseURL: real ?? wire.baseURL,
    layout: wire.layout,
    apiKey: real ? process.env['OPENAI_API_KEY'] || 'sk-local' : 'demo',
    headers: real ? {} : headers,
    workspace,
    runDir: join(workspace, '.forkcache', 'runs'),
    warm: options.warm,
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    pool: { maxThreads: 2, concurrentTasksPerWorker: 16 },
  }).catch(async (err: unknown) => {
    await emulator.close();
    throw err;
  });
  options.onEngine?.(engine);
  const client = createAnthropicClient({ baseURL: emulator.url, apiKey: 'demo', defaultHeaders: headers });
  const ledger = new UsageLedger({ table: catalogue });
  let board: Promise<FanOutResult> | undefined;
  const agentTool = engine.agentTool({
    parentId: 'parent',
    ledger,
    meta: real
      ? { api: 'real', provider }
      : { api: 'emulator', provider, emulator: { script: 'refactor', latency: options.latency } },
    onFanOut: (fan) => {
      options.watch?.(fan);
      board = showProgress(fan, options.plain, model, catalogue);
    },
  });
  try {
    const parent = await runParentAgent({
      client,
      send: wire.send,
      model,
      system: DEMO_SYSTEM_PROMPT,
      tools: TOOL_DECLARATIONS,
      executor: createToolExecutor({ workspace }),
      agentTool,
      prompt: `rename ${DEMO_OLD_NAME} to ${DEMO_NEW_NAME} across src`,
      // the scripted parent's figures are the emulator's: beside a real server's they would mislead
      onTurn: ({ turn, usage, sentAt }) =>
        real
          ? undefined
          : ledger.record({ forkId: 'parent', kind: 'parent', turn: turn - 1, model, usage, at: sentAt }),
    });
    const fanOutResult = await board;
    if (!fanOutResult) throw new Error('the parent agent finished without forking');
    // The parent's last turn came after the fan-out: the tree's totals include it.
    // (the fan-out's own warnings: on a local engine it drops the unpriced-model one)
    const result: FanOutResult = {
      ...fanOutResult,
      summary: { ...fanOutResult.summary, ...ledger.summary('parent'), warnings: fanOutResult.summary.warnings },
    };
    return {
      workspace,
      result,
      parentTurns: parent.turns,
      parentText: parent.finalText,
      leftovers: filesMentioning(workspace, DEMO_OLD_NAME),
    };
  } finally {
    await engine.close();
    await emulator.close();
  }
}

/** Live progress of one fan-out; resolves with its result once it has settled. */
async function showProgress(
  fan: FanOut,
  plain: boolean,
  model: string,
  catalogue: ModelCatalogue,
): Promise<FanOutResult> {
  const board = new ProgressBoard({ model, plain, catalogue });
  for await (const event of fan) board.onEvent(event);
  board.stop();
  return fan.settled();
}
