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
  const link: PortLink = { closed: false, permits: new Map(), post: (message) => port.postMessage(message) };
  let markEnded!: () => void;
  const ended = new Promise<void>((resolve) => (markEnded = resolve));
  port.on('message', (message: WorkerToMain) => {
    switch (message.t) {
      case 'acquire':
        answerAcquire(link, gate, signal, message);
        break;
      case 'started':
        link.permits.get(message.seq)?.started(message.report);
        break;
      case 'release':
        link.permits.get(message.seq)?.release(message.report);
        link.permits.delete(message.seq);
        break;
      case 'event':
        onEvent(message.event);
        break;
      case 'ask':
        answerAsk(link, onAsk, message);
        break;
      case 'host-call':
        answerHostCall(link, onHostCall, message);
        break;
      case 'output-check':
        answerOutputCheck(link, onOutputCheck, message);
        break;
      case 'end':
        markEnded();
        break;
    }
  });
  return {
    ended,
    close() {
      link.closed = true;
      for (const permit of link.permits.values()) permit.release();
      link.permits.clear();
      port.close();
    },
  };
}

/**
 * What the answering steps share: the way back to the worker, whether the port is closed (an
 * answer that comes after is dropped), and the permits the worker holds, by its `seq`.
 */
export interface PortLink {
  closed: boolean;
  readonly permits: Map<number, GatePermit>;
  post(message: MainToWorker): void;
}

type Request<T extends WorkerToMain['t']> = Extract<WorkerToMain, { t: T }>;

/** A permit from the gate: granted (and held until released), or denied with the gate's error. */
export function answerAcquire(
  link: PortLink,
  gate: RequestGate,
  signal: AbortSignal,
  message: Request<'acquire'>,
): void {
  gate.acquire({ turn: message.turn, first: message.first, signal, cost: message.cost }).then(
    (permit) => {
      if (link.closed) return permit.release();
      link.permits.set(message.seq, permit);
      link.post({ t: 'grant', seq: message.seq, slot: permit.slot });
    },
    (err: unknown) =>
      !link.closed &&
      link.post({
        t: 'deny',
        seq: message.seq,
        message: err instanceof Error ? err.message : String(err),
        code: (err as { code?: unknown })?.code === undefined ? undefined : String((err as { code: unknown }).code),
      }),
  );
}

/** The permission handler's answer; a handler that fails denies. */
export function answerAsk(
  link: PortLink,
  onAsk: (tool: string, input: unknown) => Promise<PermissionAnswer>,
  message: Request<'ask'>,
): void {
  onAsk(message.tool, message.input).then(
    (answer) =>
      !link.closed && link.post({ t: 'answer', seq: message.seq, allow: answer.allow, reason: answer.reason }),
    (err: unknown) =>
      !link.closed &&
      link.post({
        t: 'answer',
        seq: message.seq,
        allow: false,
        reason: `the permission handler failed: ${(err as Error).message}`,
      }),
  );
}

/** A host tool call's result; a handler that throws is a `TOOL_HOST_FAILED` result. */
export function answerHostCall(link: PortLink, onHostCall: HostCallHandler, message: Request<'host-call'>): void {
  onHostCall(message.tool, message.input, message.toolUseId).then(
    (result) =>
      !link.closed &&
      link.post({
        t: 'host-result',
        seq: message.seq,
        isError: result.isError,
        content: result.content,
        code: result.isError ? result.code : undefined,
      }),
    // the fork was aborted meanwhile: its worker is told by `cancel`, and stops waiting
    (err: unknown) =>
      !link.closed &&
      link.post({
        t: 'host-result',
        seq: message.seq,
        isError: true,
        content: (err as Error).message,
        code: 'TOOL_HOST_FAILED',
      }),
  );
}

/** The output schema's verdict on the fork's final text; without a schema here, or one that throws, a mismatch. */
export function answerOutputCheck(
  link: PortLink,
  onOutputCheck: OutputCheckHandler | undefined,
  message: Request<'output-check'>,
): void {
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
        !link.closed &&
        link.post({
          t: 'output-verdict',
          seq: message.seq,
          ok: answer.ok,
          errors: answer.ok ? undefined : answer.errors,
        }),
    );
}
