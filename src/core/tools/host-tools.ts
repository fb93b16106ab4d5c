import { z } from 'zod';
import { parseOrThrow } from '../util/validation.ts';
import { SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { toolError, toolOk, type ToolResult } from './result.ts';
import { type StandardSchemaV1, validateStandard } from './standard-schema.ts';

/** What a host tool's handler is given besides the model's input. */
export interface HostToolContext {
  /** The fork's abort signal, joined with the tool's timeout: stop when it aborts. */
  readonly signal: AbortSignal;
  readonly forkId: string;
  /** The model's `tool_use` id of this call. */
  readonly toolUseId: string;
}

/** A tool result as a handler may return it: text, or text marked as an error for the model. */
export type HostToolOutput = string | { content: string; isError?: boolean | undefined };

/**
 * A tool of the parent's own array that no built-in executor runs (`search_tickets`, a
 * database query): its handler runs on the engine's thread, reached from the fork's worker.
 * With an `inputSchema`, `execute` gets the model's input as the schema's output type.
 *
 * @example
 * const lookup: HostTool<{ name: string }> = {
 *   inputSchema: z.object({ name: z.string() }),
 *   execute: ({ name }) => `user ${name}: plan pro`,
 * };
 */
export interface HostTool<Input = unknown> {
  /**
   * Checks the model's input before `execute` runs (zod 4, valibot, arktype: any Standard
   * Schema): a mismatch is an error result naming the field, for the model to correct, and
   * `execute` does not run. `execute` gets the schema's output (defaults and transforms applied).
   */
  readonly inputSchema?: StandardSchemaV1<unknown, Input> | undefined;
  execute(input: Input, ctx: HostToolContext): Promise<HostToolOutput> | HostToolOutput;
  /**
   * It changes nothing: a call interrupted by a stop runs again on resume. Default false: an
   * interrupted call is reported to the model as of unknown outcome, never repeated.
   */
  readonly readOnly?: boolean | undefined;
  /** Then the call's signal aborts and the model is told it timed out (default 60 s). */
  readonly timeoutMs?: number | undefined;
  /** A longer result is cut there, with a note saying so (default 256 KiB). */
  readonly maxResultBytes?: number | undefined;
}

const DEFAULT_HOST_TOOL_TIMEOUT_MS = 60_000;
const DEFAULT_HOST_RESULT_BYTES = 256 * 1024;

/** What the worker knows of a host tool: its name and whether it only reads (plain data, cloned into the task). */
export interface HostToolInfo {
  readonly name: string;
  readonly readOnly: boolean;
}

/**
 * The executor's seam to host tools: on the worker side a round trip over the fork's port,
 * in tests anything that answers. A host tool wins for its name over the built-in tools.
 */
export interface HostToolSet {
  has(name: string): boolean;
  readOnly(name: string): boolean;
  call(
    name: string,
    input: unknown,
    opts: { signal?: AbortSignal | undefined; toolUseId: string },
  ): Promise<ToolResult>;
}

const hostToolSchema = z.strictObject({
  execute: z.custom<HostTool['execute']>((v) => typeof v === 'function', 'expected a function'),
  inputSchema: z
    .custom<StandardSchemaV1>(
      (v) =>
        typeof v === 'object' && v !== null && typeof (v as StandardSchemaV1)['~standard']?.validate === 'function',
      'expected a Standard Schema (zod 4, valibot, arktype: an object with ~standard.validate)',
    )
    .optional(),
  readOnly: z.boolean().optional(),
  timeoutMs: z.number().int().positive().max(86_400_000).optional(),
  maxResultBytes: z
    .number()
    .int()
    .positive()
    .max(32 * 1024 * 1024)
    .optional(),
});

export const hostToolsSchema = z
  .record(
    z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'a tool name: letters, digits, _ . : - (1 to 128)'),
    hostToolSchema,
  )
  .refine((tools) => !Object.hasOwn(tools, SPAWN_TOOL_NAME), {
    message: `${SPAWN_TOOL_NAME} is the spawn tool: the engine handles it, a host tool may not`,
  });

/** Validate a host tool record (`hostTools.search.timeoutMs: …` names the field). */
export function parseHostTools(value: unknown, what: string): Record<string, HostTool> {
  if (value === undefined) return {};
  parseOrThrow(z.strictObject({ hostTools: hostToolsSchema }), { hostTools: value }, 'INVALID_OPTION', what);
  // the objects as given: a handler may be a method that needs its own `this`
  return value as Record<string, HostTool>;
}

/** The worker's view of a host tool record. */
export function hostToolInfos(tools: Readonly<Record<string, HostTool>>): HostToolInfo[] {
  return Object.entries(tools).map(([name, tool]) => ({ name, readOnly: tool.readOnly === true }));
}

/** Cut a text to `max` UTF-8 bytes at a character boundary, saying how much was left out. */
export function capResult(text: string, max: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return text;
  let cut = Buffer.from(text).subarray(0, max).toString('utf8');
  // a multi-byte character cut in half decodes to U+FFFD: drop it
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return `${cut}\n[truncated: the result had ${bytes} bytes, the first ${max} are shown]`;
}

/**
 * Run one host tool call on the engine's thread: the fork's signal and the tool's timeout
 * both stop it, a failure is a result the model can act on, the size limit is applied. The
 * promise rejects only when the fork itself was aborted (its reason).
 */
export async function runHostTool(
  name: string,
  tool: HostTool,
  input: unknown,
  ctx: { signal: AbortSignal; forkId: string; toolUseId: string },
): Promise<ToolResult> {
  ctx.signal.throwIfAborted();
  const timeoutMs = tool.timeoutMs ?? DEFAULT_HOST_TOOL_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([ctx.signal, deadline]);
  const max = tool.maxResultBytes ?? DEFAULT_HOST_RESULT_BYTES;
  try {
    let checked = input;
    if (tool.inputSchema) {
      const valid = await validateStandard(tool.inputSchema, input);
      if (!valid.ok)
        return toolError(
          'TOOL_INPUT_INVALID',
          capResult(`${name}: the input does not match its schema: ${valid.message}`, max),
        );
      checked = valid.value;
    }
    const work = Promise.resolve().then(() =>
      tool.execute(checked, { signal, forkId: ctx.forkId, toolUseId: ctx.toolUseId }),
    );
    const output = await untilAborted(work, signal);
    if (typeof output === 'string') return toolOk(capResult(output, max));
    if (typeof output?.content !== 'string')
      return toolError('TOOL_HOST_FAILED', `${name} returned no text result (expected a string or { content })`);
    const content = capResult(output.content, max);
    return output.isError === true ? toolError('TOOL_HOST_FAILED', content) : toolOk(content);
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (deadline.aborted)
      return toolError('TOOL_TIMEOUT', `${name} did not finish within ${timeoutMs} ms and was stopped`);
    const message = err instanceof Error ? err.message : String(err);
    return toolError('TOOL_HOST_FAILED', capResult(`${name} failed: ${message}`, max));
  }
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
