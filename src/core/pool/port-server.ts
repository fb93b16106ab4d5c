import type { MessagePort } from 'node:worker_threads';
import type { GatePermit, LoopEvent, OutputVerdict, RequestGate } from '../loop/types.ts';
import type { PermissionAnswer } from '../tools/permissions.ts';
import type { MainToWorker, WorkerToMain } from './protocol.ts';
import { toolError, type ToolResult } from '../tools/result.ts';

/** Runs a fork's host tool call on the main thread (the fan-out's handlers, a distributed host's). */
export type HostCallHandler = (tool: string, input: unknown, toolUseId: string) => Promise<ToolResult>;

/** Checks a fork's final text against the fan-out's output schema (on the main thread, where the schema is). */
export type OutputCheckHandler = (text: string) => Promise<OutputVerdict>;

const noHostTools: HostCallHandler = (tool) =>
  Promise.resolve(toolError('TOOL_UNKNOWN', `no host tool ${JSON.stringify(tool)} is registered here`));

/**
 * The main thread's end of a fork's port: answers permit requests from the shared gate and
 * passes events on, and runs host tool calls. `close()` releases any permit the worker still held (a worker that died
 * mid-request must not keep a concurrency slot forever).
 */
export function servePort(
  port: MessagePort,
  gate: RequestGate,
  signal: AbortSignal,
  onEvent: (event: LoopEvent) => void,
  onAsk: (tool: string, input: unknown) => Promise<PermissionAnswer>,
  onHostCall: HostCallHandler = noHostTools,
  onOutputCheck?: OutputCheckHandler,
): { ended: Promise<void>; close(): void } {
  const permits = new Map<number, GatePermit>();
  let markEnded!: () => void;
  const ended = new Promise<void>((resolve) => (markEnded = resolve));
  let closed = false;
  const post = (message: MainToWorker): void => port.postMessage(message);
  port.on('message', (message: WorkerToMain) => {
    switch (message.t) {
      case 'acquire':
        gate.acquire({ turn: message.turn, first: message.first, signal, cost: message.cost }).then(
          (permit) => {
            if (closed) return permit.release();
            permits.set(message.seq, permit);
            post({ t: 'grant', seq: message.seq, slot: permit.slot });
          },
          (err: unknown) =>
            !closed &&
            post({
              t: 'deny',
              seq: message.seq,
              message: err instanceof Error ? err.message : String(err),
              code:
                (err as { code?: unknown })?.code === undefined ? undefined : String((err as { code: unknown }).code),
            }),
        );
        break;
      case 'started':
        permits.get(message.seq)?.started(message.report);
        break;
      case 'release':
        permits.get(message.seq)?.release(message.report);
        permits.delete(message.seq);
        break;
      case 'event':
        onEvent(message.event);
        break;
      case 'ask':
        onAsk(message.tool, message.input).then(
          (answer) => !closed && post({ t: 'answer', seq: message.seq, allow: answer.allow, reason: answer.reason }),
          (err: unknown) =>
            !closed &&
            post({
              t: 'answer',
              seq: message.seq,
              allow: false,
              reason: `the permission handler failed: ${(err as Error).message}`,
            }),
        );
        break;
      case 'host-call':
        onHostCall(message.tool, message.input, message.toolUseId).then(
          (result) =>
            !closed &&
            post({
              t: 'host-result',
              seq: message.seq,
              isError: result.isError,
              content: result.content,
              code: result.isError ? result.code : undefined,
            }),
          // the fork was aborted meanwhile: its worker is told by `cancel`, and stops waiting
          (err: unknown) =>
            !closed &&
            post({
              t: 'host-result',
              seq: message.seq,
              isError: true,
              content: (err as Error).message,
              code: 'TOOL_HOST_FAILED',
            }),
        );
        break;
      case 'output-check': {
        const verdict: Promise<OutputVerdict> = onOutputCheck
          ? onOutputCheck(message.text)
          : Promise.resolve({ ok: false, errors: 'no output schema is held here' });
        void verdict
          // a schema that throws is the embedder's bug: the fork is told, as of a mismatch
          .catch((err: unknown): OutputVerdict => ({
            ok: false,
            errors: `the output schema failed: ${err instanceof Error ? err.message : String(err)}`,
          }))
          .then(
            (answer) =>
              !closed &&
              post({
                t: 'output-verdict',
                seq: message.seq,
                ok: answer.ok,
                errors: answer.ok ? undefined : answer.errors,
              }),
          );
        break;
      }
      case 'end':
        markEnded();
        break;
    }
  });
  return {
    ended,
    close() {
      closed = true;
      for (const permit of permits.values()) permit.release();
      permits.clear();
      port.close();
    },
  };
}
