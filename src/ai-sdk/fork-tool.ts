import { z } from 'zod';
import { systemClock } from '../clock.ts';
import type { ForkEngine } from '../engine/engine.ts';
import type { FanOutOptions } from '../engine/fan-out/types.ts';
import { ForkcacheError } from '../errors.ts';
import { captureSnapshot } from '../fork/snapshot.ts';
import { UsageLedger } from '../ledger/ledger.ts';
import type { ForkResult } from '../agent/fork-handle.ts';
import type { HostTool } from '../tools/host-tools.ts';
import { type CapturedExchange, RequestCapture } from './capture.ts';

/**
 * What forkcache needs of an AI SDK tool (`tool({ description, inputSchema, execute })`):
 * structural, so this module's types compile without the `ai` package.
 */
export interface AiSdkTool {
  description?: string | undefined;
  inputSchema?: unknown;
  /** Called as the AI SDK calls it: `(input, { toolCallId, messages, abortSignal })`. */
  execute?: ((input: never, options: never) => unknown) | undefined;
}

/** The fork tool: an AI SDK tool (`tools: { fork: forkcache.forkTool({ tools }) }`). */
export interface ForkTool {
  description: string;
  inputSchema: typeof inputSchema;
  execute: (input: { directives: string[] }, options: AiSdkToolCallOptions) => Promise<ForkToolOutput | string>;
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

export interface ForkToolOptions {
  /** The app's own AI SDK tools: the children run them (their `execute`) as host tools. */
  tools: Readonly<Record<string, AiSdkTool>>;
  /** The name the fork tool has in the app's `tools` (default `fork`): children may not call it. */
  name?: string;
  /** `true`: the tool returns at once; the reports come later from `forkcache.takeReports()`. */
  background?: boolean;
  /** Tool names that only read (a call interrupted by a stop runs again on resume). */
  readOnly?: readonly string[];
  /** Passed on to every fan-out (`check`, `fields`, `meta`…). */
  fanOut?: Omit<FanOutOptions, 'hostTools' | 'ledger' | 'signal' | 'foreground' | 'parentId'>;
}

/** What the fork tool returns to the model (foreground) and `takeReports()` gives (background). */
export interface ForkToolOutput {
  fanoutId: string;
  forks: { forkId: string; directive: string; status: string; report: string }[];
  cacheEfficiency: number;
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
    host[tool] = {
      readOnly: options.readOnly?.includes(tool) ?? false,
      execute: async (input, ctx) =>
        toText(await lastValue(execute(input, { toolCallId: ctx.toolUseId, messages: [], abortSignal: ctx.signal }))),
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

function outputOf(fanoutId: string, forks: readonly ForkResult[], cacheEfficiency: number): ForkToolOutput {
  return {
    fanoutId,
    forks: forks.map((f) => ({ forkId: f.forkId, directive: f.directive, status: f.status, report: f.finalText })),
    cacheEfficiency,
  };
}

/**
 * forkcache inside an AI SDK app: pass `fetch` to the provider (`createAnthropic({ fetch })`)
 * so the exact request the app sends is kept, and add `forkTool({ tools })` to the agent's
 * tools. When the model calls it, the children fork from that request (its bytes, and the
 * response's assistant turn holding the call), run the app's own tools as host tools, and
 * their reports come back as the tool's output. See docs/ai-sdk.md.
 */
export function createForkcache(options: ForkcacheAiSdkOptions): {
  fetch: typeof globalThis.fetch;
  ledger: UsageLedger;
  forkTool(options: ForkToolOptions): ForkTool;
  takeReports(): ForkToolOutput[];
} {
  const engine = options.engine;
  const ledger = options.ledger ?? new UsageLedger();
  let parentTurns = 0;
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
  const finished: ForkToolOutput[] = [];
  return {
    fetch: capture.fetch,
    ledger,
    takeReports: () => finished.splice(0),
    forkTool(toolOptions) {
      const hostTools = hostToolsOf(toolOptions.tools, toolOptions);
      return {
        description:
          'Fork this conversation into parallel children, one per directive: each starts from everything said so far, with the same tools, does its directive and reports back.',
        inputSchema,
        execute: async (input, call) => {
          const { directives } = inputSchema.parse(input);
          const exchange = await capture.find(call.toolCallId);
          if (!exchange)
            throw new ForkcacheError(
              'INVALID_ARGUMENT',
              `fork tool: the request that called it (tool call ${call.toolCallId}) did not go through forkcache's fetch: pass it to the provider, createAnthropic({ fetch: forkcache.fetch })`,
            );
          const messages = [
            ...(exchange.request['messages'] as unknown[]),
            { role: 'assistant', content: exchange.assistant },
          ];
          const snapshot = captureSnapshot({ ...exchange.request, messages });
          const fan = engine.fanOut(snapshot, directives, {
            ...toolOptions.fanOut,
            hostTools,
            ledger,
            ...(exchange.usage ? { parentUsage: exchange.usage } : {}),
            ...(call.abortSignal ? { signal: call.abortSignal } : {}),
            foreground: toolOptions.background !== true,
          });
          const settled = fan
            .settled()
            .then(({ forks, summary }) => outputOf(fan.id, forks, summary.cache.cache_efficiency));
          if (toolOptions.background !== true) return settled;
          void settled.then(
            (output) => finished.push(output),
            () => undefined,
          );
          return `Started ${directives.length} fork(s) in the background (${fan.id}); their reports arrive as a later message.`;
        },
      };
    },
  };
}
