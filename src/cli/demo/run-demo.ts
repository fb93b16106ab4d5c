import type Anthropic from '@anthropic-ai/sdk';
import { ForkcacheError } from '../../core/util/errors.ts';
import { SPAWN_TOOL_NAME } from '../../core/wire/fork-text.ts';
import { BUILTIN_CATALOGUE, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { DEFAULT_MODEL } from '../../core/models/defaults.ts';
import type { ProviderId } from '../../core/wire/providers.ts';
import { PROVIDERS } from '../../providers/registry.ts';
import { demoWire, emulatorApiOf } from './provider-wire.ts';
import { join } from 'node:path';
import { startEmulator } from '../../integrations/emulator/start.ts';
import { ForkEngine } from '../../core/engine/engine.ts';
import type { FanOut, FanOutResult } from '../../core/agent/fork-handle.ts';
import { runParentAgent } from '../../core/agent/parent-agent.ts';
import { UsageLedger } from '../../core/ledger/ledger.ts';
import { createAnthropicClient } from '../../providers/anthropic/client.ts';
import { TOOL_DECLARATIONS } from '../../core/tools/declarations.ts';
import { createToolExecutor } from '../../core/tools/executor.ts';
import type { WarmStrategy } from '../../core/settings/engine-settings.ts';
import type { LatencyName } from '../../integrations/emulator/latency.ts';
import { ProgressBoard } from '../board/progress-board.ts';
import { DEMO_SYSTEM_PROMPT } from './system-prompt.ts';
import { DEMO_NEW_NAME, DEMO_OLD_NAME, filesMentioning, prepareDemoWorkspace } from './workspace.ts';

export const DEMO_MODEL = DEFAULT_MODEL;

/** The demo's model on a provider (the Anthropic default, else the provider's catalogue row). */
export function demoModelOf(provider: ProviderId): string {
  return PROVIDERS[provider].defaultModel ?? DEMO_MODEL;
}

interface DemoOptions {
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
  /** Aborted on Ctrl-C: the parent agent sends no further turn (`watch` cancels the forks). */
  signal?: AbortSignal | undefined;
  /** The live board, once it exists (the CLI's own lines go through it while it is up). */
  onBoard?: (board: ProgressBoard | undefined) => void;
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
  /** The parent was stopped by Ctrl-C (its last turn not sent or not answered). */
  parentInterrupted: boolean;
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
    runsDir: join(workspace, '.forkcache', 'runs'),
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
  // one board for the whole demo: the parent's status shows before its first spawn
  const board = new ProgressBoard({ model, plain: options.plain, catalogue });
  options.onBoard?.(board);
  let progress: Promise<FanOutResult> | undefined;
  const agentTool = engine.agentTool({
    parentId: 'parent',
    ledger,
    meta: real
      ? { api: 'real', provider }
      : { api: 'emulator', provider, emulator: { script: 'refactor', latency: options.latency } },
    onFanOut: (fan) => {
      options.watch?.(fan);
      board.parent(`forked ${fan.forks.length} children; waiting for their reports`);
      progress = showProgress(fan, board);
    },
  });
  let turn = 0;
  const send =
    wire.send ??
    ((p: Anthropic.MessageCreateParamsNonStreaming) => client.messages.create(p, { signal: options.signal }));
  try {
    const parent = await runParentAgent({
      client,
      send: (params) => {
        if (options.signal?.aborted) return Promise.reject(options.signal.reason as Error);
        turn += 1;
        board.parent(`turn ${turn}: the model is writing its answer`);
        return untilAborted(send(params), options.signal);
      },
      model,
      system: DEMO_SYSTEM_PROMPT,
      tools: TOOL_DECLARATIONS,
      // the survey's grep must list every file the demo made (a few matches per file)
      executor: createToolExecutor({ workspace, limits: { maxGrepMatches: Math.max(200, options.forks * 8) } }),
      agentTool,
      prompt: `rename ${DEMO_OLD_NAME} to ${DEMO_NEW_NAME} across src`,
      // one spawn call per file in one message: ~30 output tokens each (8,192 stopped at 263 forks)
      maxTokens: Math.max(8192, options.forks * 64),
      onTurn: ({ turn, usage, sentAt, message }) => {
        // the scripted parent's figures are the emulator's: beside a real server's they would mislead
        if (!real) ledger.record({ forkId: 'parent', kind: 'parent', turn: turn - 1, model, usage, at: sentAt });
        const tools = message.content.flatMap((b) =>
          b.type === 'tool_use' && b.name !== SPAWN_TOOL_NAME ? [b.name] : [],
        );
        const spawned = message.content.some((b) => b.type === 'tool_use' && b.name === SPAWN_TOOL_NAME);
        if (tools.length > 0) board.parent(`turn ${turn}: running ${tools.join(', ')}`);
        else if (!spawned && agentTool.pending > 0) board.parent(`turn ${turn} done: waiting for its forks' reports`);
      },
    }).catch((err: unknown) => {
      // Ctrl-C: the parent stops where it is; the forks it started end cancelled and are resumable
      if (options.signal?.aborted) return undefined;
      throw err;
    });
    board.parent(undefined);
    const fanOutResult = await progress;
    if (!fanOutResult)
      throw options.signal?.aborted
        ? new ForkcacheError(
            'FORK_CANCELLED',
            `interrupted before the parent forked; nothing to resume (workspace ${workspace})`,
          )
        : new ForkcacheError('INTERNAL', 'the parent agent finished without forking');
    // The parent's last turn came after the fan-out: the tree's totals include it.
    // (the fan-out's own warnings: on a local engine it drops the unpriced-model one)
    const result: FanOutResult = {
      ...fanOutResult,
      summary: { ...fanOutResult.summary, ...ledger.summary('parent'), warnings: fanOutResult.summary.warnings },
    };
    return {
      workspace,
      result,
      parentTurns: parent?.turns ?? turn,
      parentText: parent?.finalText ?? `interrupted at turn ${turn}`,
      parentInterrupted: parent === undefined,
      leftovers: filesMentioning(workspace, DEMO_OLD_NAME),
    };
  } finally {
    board.stop();
    options.onBoard?.(undefined);
    await engine.close();
    await emulator.close();
  }
}

/** Live progress of one fan-out on the demo's board; resolves with its result once it has settled. */
async function showProgress(fan: FanOut, board: ProgressBoard): Promise<FanOutResult> {
  board.plan(fan);
  for await (const event of fan) board.onEvent(event);
  return fan.settled();
}

/** The request, or the signal's reason once it is aborted (a chat provider's send takes no signal). */
function untilAborted<T>(request: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return request;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    request.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
