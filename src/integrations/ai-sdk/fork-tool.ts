import { z } from 'zod';
import { systemClock } from '../../core/util/clock.ts';
import type { ForkEngine } from '../../core/engine/engine.ts';
import type { FanOutOptions } from '../../core/engine/fan-out/types.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { BACKGROUND_REPORTS_HEADING, BACKGROUND_STARTED, quoteChildText } from '../../core/wire/fork-text.ts';
import { messagesRequestFromChat } from '../../core/fork/chat-request.ts';
import { captureSnapshot, type ParentSnapshot } from '../../core/fork/snapshot.ts';
import { UsageLedger } from '../../core/ledger/ledger.ts';
import type { ForkResult } from '../../core/agent/fork-handle.ts';
import { type FanOutProgress, progressOf } from '../../core/agent/fan-out-progress.ts';
import type { HostTool } from '../../core/tools/host-tools.ts';
import type { StandardSchemaV1 } from '../../core/tools/standard-schema.ts';
import { parseOutputSchema } from '../../core/engine/fan-out/output.ts';
import { type CapturedExchange, RequestCapture } from './capture.ts';

/**
 * What forkcache needs of an AI SDK tool (`tool({ description, inputSchema, execute })`):
 * structural, so this module's types compile without the `ai` package, and take the tools of
 * `ai` 6 and 7 alike.
 */
export interface AiSdkTool {
  /** Never read (the children's tool array is the app's request's); in `ai` 7 it may be a function of the tool's context. */
  description?: unknown;
  inputSchema?: unknown;
  /** Called as the AI SDK calls it: `(input, { toolCallId, messages, abortSignal, context })` (`context`: ai 7). */
  execute?: ((input: never, options: never) => unknown) | undefined;
}

/**
 * The fork tool: an AI SDK tool (`tools: { fork: forkcache.forkTool({ tools }) }`). Its
 * `execute` streams (AI SDK 6/7 preliminary tool results): a `ForkToolProgress` as each child
 * starts, calls a tool, finishes a turn and ends, then the `ForkToolOutput` (in the background,
 * only the `BackgroundStarted`). The model sees only the last; `streamText` gives the app every
 * one (`tool-result` parts with `preliminary: true`) to show each child live.
 */
export interface ForkTool<Output = unknown> {
  description: string;
  inputSchema: typeof inputSchema;
  execute: (
    input: { directives: string[] },
    options: AiSdkToolCallOptions,
  ) => AsyncIterable<ForkToolProgress | ForkToolOutput<Output> | BackgroundStarted>;
}

/** A preliminary result of the fork tool: where each child is (the library's `progressOf`). */
export interface ForkToolProgress extends FanOutProgress {
  status: 'running';
}

/** The second argument of an AI SDK tool's `execute`. */
export interface AiSdkToolCallOptions {
  toolCallId: string;
  abortSignal?: AbortSignal | undefined;
}

export interface ForkcacheAiSdkOptions {
  /** The engine the children run on (its `baseURL` and key: the same endpoint as the app's provider). */
  engine: ForkEngine;
  /** The fetch the wrapped one calls (default `globalThis.fetch`). */
  fetch?: typeof globalThis.fetch;
  /** One ledger for the app's own turns and every child's (default: a new one). */
  ledger?: UsageLedger;
}

export interface ForkToolOptions<Output = unknown> {
  /**
   * Typed results: every child reports one JSON value this schema (zod 4, any Standard Schema)
   * checks; a child whose report does not match gets one repair turn, then ends
   * `invalid_output`. Each fork's `output` in the tool's result is the schema's output type.
   */
  outputSchema?: StandardSchemaV1<unknown, Output>;
  /** The app's own AI SDK tools: the children run them (their `execute`) as host tools. */
  tools: Readonly<Record<string, AiSdkTool>>;
  /** The name the fork tool has in the app's `tools` (default `fork`): children may not call it. */
  name?: string;
  /**
   * `true`: the tool returns at once (`BackgroundStarted`); the reports come later, from
   * `forkcache.collect()` (waits) or `takeReports()` (what has finished), as a message of their
   * own (`forkcache.reportMessage(outputs)`).
   */
  background?: boolean;
  /** Tool names that only read (a call interrupted by a stop runs again on resume). */
  readOnly?: readonly string[];
  /**
   * `ai` 7: each tool's `context`, keyed by tool name, as the agent is given it (`toolsContext`):
   * a child's call of that tool gets it as `context`, as the agent's own calls do. The fork
   * tool's own `execute` sees only its own entry, so the app passes them here.
   */
  toolsContext?: Readonly<Record<string, unknown>>;
  /** Passed on to every fan-out (`check`, `fields`, `meta`…). */
  fanOut?: Omit<FanOutOptions, 'hostTools' | 'ledger' | 'signal' | 'foreground' | 'parentId' | 'outputSchema'>;
}

/**
 * What the fork tool returns to the model (foreground) and `collect()`/`takeReports()` give
 * (background). With an output schema each fork's `output` is its report's value, typed.
 */
export interface ForkToolOutput<Output = unknown> {
  fanoutId: string;
  forks: ForkToolFork<Output>[];
  cacheEfficiency: number;
  /** In the background only: the fan-out failed as a whole (no fork ran to an end); why. */
  error?: string;
}

/** One child in the fork tool's output. */
export interface ForkToolFork<Output = unknown> {
  forkId: string;
  directive: string;
  /** How it ended (`completed`; `invalid_output`: no report matched the output schema …). */
  status: string;
  report: string;
  /** With an output schema: the value its report held, as the schema's output (absent: none matched). */
  output?: Output;
}

/** The fork tool's output in the background: the run id at once, the reports later. */
export interface BackgroundStarted {
  fanoutId: string;
  status: 'running';
  forks: number;
  message: string;
}

/** A background fan-out not yet handed to the app. */
export interface PendingFanOut {
  fanoutId: string;
  /** The tool call that started it. */
  toolCallId: string;
  directives: number;
  /** Every child has ended; `takeReports()` would return it now. */
  settled: boolean;
}

/** The later message that brings background reports (an AI SDK `ModelMessage`). */
export interface ReportMessage {
  role: 'user';
  content: [{ type: 'text'; text: string }];
}

const inputSchema = z.object({
  directives: z
    .array(z.string().min(1))
    .min(1)
    .describe('One self-contained task per child; each child starts from this conversation, with its tools'),
});

/** The app's tools as host tools: their own `execute`, with the fork's abort signal. */
function hostToolsOf(tools: Readonly<Record<string, AiSdkTool>>, options: ForkToolOptions): Record<string, HostTool> {
  const name = options.name ?? 'fork';
  const host: Record<string, HostTool> = {
    // the recursion guard, and a handler for the preflight: a child's fork tool answers, never forks
    [name]: { execute: () => ({ content: `${name} is not available in a fork: do the task yourself`, isError: true }) },
  };
  for (const [tool, definition] of Object.entries(tools)) {
    const execute = definition.execute as ((input: unknown, options: object) => unknown) | undefined;
    if (tool === name || typeof execute !== 'function') continue;
    const context = options.toolsContext?.[tool];
    // the tool's own zod (Standard Schema) input schema: a child's call is checked and parsed as the agent's are
    const schema = definition.inputSchema as StandardSchemaV1 | undefined;
    const standard = typeof schema?.['~standard']?.validate === 'function';
    host[tool] = {
      ...(standard ? { inputSchema: schema } : {}),
      readOnly: options.readOnly?.includes(tool) ?? false,
      execute: async (input, ctx) =>
        toText(
          await lastValue(
            execute(input, { toolCallId: ctx.toolUseId, messages: [], abortSignal: ctx.signal, context }),
          ),
        ),
    };
  }
  return host;
}

/** A tool's output as the text of a tool result (the AI SDK's JSON output, or its string). */
function toText(output: unknown): string {
  return typeof output === 'string' ? output : (JSON.stringify(output) ?? '');
}

/** An AI SDK tool may stream its output (an async iterable): its last value is the result. */
async function lastValue(value: unknown): Promise<unknown> {
  const awaited = await value;
  if (awaited === null || typeof awaited !== 'object' || !(Symbol.asyncIterator in awaited)) return awaited;
  let last: unknown;
  for await (const item of awaited as AsyncIterable<unknown>) last = item;
  return last;
}

function outputOf<Output>(
  fanOutId: string,
  forks: readonly ForkResult[],
  cacheEfficiency: number,
): ForkToolOutput<Output> {
  return {
    fanoutId: fanOutId,
    forks: forks.map((f) => ({
      forkId: f.forkId,
      directive: f.directive,
      status: f.status,
      report: f.finalText,
      // the engine's thread checked it with the tool's own schema: it is that schema's output
      ...('output' in f ? { output: f.output as Output } : {}),
    })),
    cacheEfficiency,
  };
}

/** The engine's wire must be the app's: a Chat request cannot fork onto the Messages API, nor the reverse. */
function snapshotOf(exchange: CapturedExchange, engine: ForkEngine): ParentSnapshot {
  const provider = engine.options.api.provider;
  if ((exchange.wire === 'chat') !== (provider !== 'anthropic'))
    throw new ForkcacheError(
      'INVALID_OPTION',
      exchange.wire === 'chat'
        ? "engine.provider: the app's model speaks Chat Completions; create the engine with its provider (ForkEngine.create({ provider: 'openai' | 'dashscope' | 'deepseek' | 'openai-compatible', baseURL }))"
        : `engine.provider: the app's model speaks the Messages API, the engine "${provider}"; create the engine with provider: 'anthropic'`,
      { data: { field: 'engine.provider' } },
    );
  if (exchange.wire === 'chat') return captureSnapshot(messagesRequestFromChat(exchange.request, exchange.chatMessage));
  return captureSnapshot({
    ...exchange.request,
    messages: [...(exchange.request['messages'] as unknown[]), { role: 'assistant', content: exchange.assistant }],
  });
}

interface BackgroundRun extends PendingFanOut {
  output: Promise<ForkToolOutput>;
  result?: ForkToolOutput;
}

/** The reports of finished background fan-outs as one message, in the order they were started. */
function reportText(outputs: readonly ForkToolOutput[]): string {
  const lines = [BACKGROUND_REPORTS_HEADING];
  for (const output of outputs) {
    if (output.error !== undefined) {
      lines.push(`fan-out ${output.fanoutId} failed: ${output.error}`);
      continue;
    }
    lines.push(`fan-out ${output.fanoutId} (cache efficiency ${output.cacheEfficiency.toFixed(3)}):`);
    // the child's report quoted: only forkcache's lines can start a `## <fork>` section
    for (const fork of output.forks)
      lines.push(`## ${fork.forkId} (${fork.status}): ${fork.directive}`, quoteChildText(fork.report));
  }
  return lines.join('\n\n');
}

/**
 * forkcache inside an AI SDK app: pass `fetch` to the provider (`createAnthropic({ fetch })`,
 * `createOpenAI({ fetch })`) so the exact request the app sends is kept, and add
 * `forkTool({ tools })` to the agent's tools. When the model calls it, the children fork from
 * that request (its content, and the response's assistant turn holding the call), run the
 * app's own tools as host tools, and their reports come back as the tool's output, or in the
 * background as a later message. See docs/ai-sdk.md.
 */
export function createForkcache(options: ForkcacheAiSdkOptions): {
  fetch: typeof globalThis.fetch;
  ledger: UsageLedger;
  forkTool<Output = unknown>(options: ForkToolOptions<Output>): ForkTool<Output>;
  /** Background fan-outs not yet collected. */
  pending(): PendingFanOut[];
  /** Waits for every pending background fan-out and hands over their outputs (each once). */
  collect(options?: { signal?: AbortSignal }): Promise<ForkToolOutput[]>;
  /** The background fan-outs that have finished, handed over once; never waits. */
  takeReports(): ForkToolOutput[];
  /** Reports as the later message to add to the conversation (`messages: [...history, message]`). */
  reportMessage(outputs: readonly ForkToolOutput[]): ReportMessage;
} {
  const engine = options.engine;
  const ledger = options.ledger ?? new UsageLedger();
  let parentTurns = 0;
  // every request the app sends is one of the parent's turns: the ledger has each once
  const onUsage = (exchange: CapturedExchange): void => {
    if (!exchange.usage) return;
    ledger.record({
      forkId: 'parent',
      kind: 'parent',
      turn: parentTurns++,
      model: String(exchange.request['model']),
      usage: exchange.usage,
      at: systemClock.now(),
    });
  };
  const capture = new RequestCapture(options.fetch ?? globalThis.fetch.bind(globalThis), onUsage);
  const runs: BackgroundRun[] = [];
  const hand = (run: BackgroundRun): void => void runs.splice(runs.indexOf(run), 1);
  return {
    fetch: capture.fetch,
    ledger,
    pending: () =>
      runs.map(({ fanoutId, toolCallId, directives, settled }) => ({ fanoutId, toolCallId, directives, settled })),
    async collect(collectOptions = {}) {
      const { signal } = collectOptions;
      signal?.throwIfAborted();
      const taken = runs.splice(0);
      const all = Promise.all(taken.map((run) => run.output));
      if (!signal) return all;
      // an abort gives the runs back: they are still running, and a later collect gets them
      return new Promise((resolve, reject) => {
        const onAbort = (): void => {
          runs.unshift(...taken);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        all.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
      });
    },
    takeReports() {
      const done = runs.filter((run) => run.result !== undefined);
      done.forEach(hand);
      return done.map((run) => run.result!);
    },
    reportMessage: (outputs) => ({ role: 'user', content: [{ type: 'text', text: reportText(outputs) }] }),
    forkTool<Output>(toolOptions: ForkToolOptions<Output>): ForkTool<Output> {
      // bad input fails here, where the app builds its tools, not at the model's first call
      parseOutputSchema(toolOptions.outputSchema, false);
      const hostTools = hostToolsOf(toolOptions.tools, toolOptions);
      return {
        description:
          'Fork this conversation into parallel children, one per directive: each starts from everything said so far, with the same tools, does its directive and reports back.',
        inputSchema,
        async *execute(input, call) {
          const { directives } = inputSchema.parse(input);
          const exchange = await capture.find(call.toolCallId);
          if (!exchange)
            throw new ForkcacheError(
              'INVALID_OPTION',
              `fork tool: the request that called it (tool call ${call.toolCallId}) did not go through forkcache's fetch: pass it to the provider, createAnthropic({ fetch: forkcache.fetch }) or createOpenAI({ fetch: forkcache.fetch })`,
            );
          const background = toolOptions.background === true;
          const fan = engine.fanOut(snapshotOf(exchange, engine), directives, {
            ...toolOptions.fanOut,
            // the app's betas as its request sent them: a child without them could be another model's turn
            headers: { ...toolOptions.fanOut?.headers, ...exchange.headers },
            hostTools,
            ledger,
            ...(call.abortSignal ? { signal: call.abortSignal } : {}),
            ...(toolOptions.outputSchema ? { outputSchema: toolOptions.outputSchema } : {}),
            foreground: !background,
          });
          const result = fan
            .settled()
            .then(({ forks, summary }) => outputOf<Output>(fan.id, forks, summary.cache.cache_efficiency));
          if (!background) {
            // handled by the `await` below; until then a failure must not count as unhandled
            result.catch(() => undefined);
            for await (const progress of progressOf(fan)) yield { ...progress, status: 'running' as const };
            yield await result;
            return;
          }
          // a background fan-out that fails as a whole is still reported (collect() never loses the others)
          const output = result.catch((err: unknown): ForkToolOutput<Output> => ({
            fanoutId: fan.id,
            forks: [],
            cacheEfficiency: 0,
            error: err instanceof Error ? err.message : String(err),
          }));
          const run: BackgroundRun = {
            fanoutId: fan.id,
            toolCallId: call.toolCallId,
            directives: directives.length,
            settled: false,
            output,
          };
          void output.then((done) => {
            run.settled = true;
            run.result = done;
          });
          runs.push(run);
          yield {
            fanoutId: fan.id,
            status: 'running' as const,
            forks: directives.length,
            message: `${directives.length} fork(s) ${BACKGROUND_STARTED} (${fan.id}); their reports arrive as a later message.`,
          };
        },
      };
    },
  };
}
