import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { GatePermit, RequestGate } from '../../../src/core/loop/types.ts';
import {
  answerAcquire,
  answerAsk,
  answerHostCall,
  answerOutputCheck,
  type PortLink,
  servePort,
} from '../../../src/core/pool/port-server.ts';
import type { MainToWorker } from '../../../src/core/pool/protocol.ts';
import { ForkcacheError } from '../../../src/core/util/errors.ts';

/** A link whose answers are kept in order; `answered` resolves at the next one. */
function link(): PortLink & { sent: MainToWorker[]; answered(): Promise<MainToWorker> } {
  const sent: MainToWorker[] = [];
  let next: ((m: MainToWorker) => void) | undefined;
  return {
    closed: false,
    permits: new Map(),
    sent,
    post(message) {
      sent.push(message);
      next?.(message);
    },
    answered: () => new Promise((resolve) => (next = resolve)),
  };
}

/** A gate that grants permits on slot 2 and counts their releases, or refuses with `refusal`. */
function gate(refusal?: Error) {
  const released: number[] = [];
  let granted = 0;
  // the last answer: awaited after the code under test took it, its callbacks have run
  let last: Promise<GatePermit> = Promise.reject(new Error('nothing acquired'));
  last.catch(() => {});
  const g: RequestGate = {
    acquire: () => {
      if (refusal) return Promise.reject(refusal);
      const id = ++granted;
      const permit: GatePermit = { slot: 2, started() {}, release: () => void released.push(id) };
      last = Promise.resolve(permit);
      return last;
    },
  };
  return { gate: g, released, last: () => last };
}

const signal = new AbortController().signal;
const acquire = { t: 'acquire', seq: 7, turn: 1, first: true } as const;

describe('answerAcquire', () => {
  it('grants the permit (its slot) and holds it under the worker’s seq', async () => {
    const l = link();
    const g = gate();
    answerAcquire(l, g.gate, signal, acquire);
    expect(await l.answered()).toEqual({ t: 'grant', seq: 7, slot: 2 });
    expect([...l.permits.keys()]).toEqual([7]);
  });

  it('denies with the gate’s message and code', async () => {
    const l = link();
    answerAcquire(
      l,
      gate(
        new ForkcacheError('SPEND_CAP_MAX_USD', 'the cap is reached', {
          data: { maxUsd: 1, spentUsd: 1, nextBoundUsd: 1.5 },
        }),
      ).gate,
      signal,
      acquire,
    );
    expect(await l.answered()).toEqual({ t: 'deny', seq: 7, message: 'the cap is reached', code: 'SPEND_CAP_MAX_USD' });
  });

  it('releases a permit granted after the port closed, and answers nothing', async () => {
    const l = link();
    const g = gate();
    l.closed = true;
    answerAcquire(l, g.gate, signal, acquire);
    await g.last();
    expect(g.released).toEqual([1]);
    expect(l.sent).toEqual([]);
    expect(l.permits.size).toBe(0);
  });
});

describe('answerAsk', () => {
  it('passes the permission handler’s answer on; a handler that fails denies', async () => {
    const l = link();
    answerAsk(l, () => Promise.resolve({ allow: true, reason: 'policy' }), {
      t: 'ask',
      seq: 1,
      tool: 'bash',
      input: {},
    });
    expect(await l.answered()).toEqual({ t: 'answer', seq: 1, allow: true, reason: 'policy' });
    answerAsk(l, () => Promise.reject(new Error('no terminal')), { t: 'ask', seq: 2, tool: 'bash', input: {} });
    expect(await l.answered()).toEqual({
      t: 'answer',
      seq: 2,
      allow: false,
      reason: 'the permission handler failed: no terminal',
    });
  });
});

describe('answerHostCall', () => {
  const call = { t: 'host-call', seq: 3, tool: 'lookup', input: { q: 1 }, toolUseId: 'tu' } as const;

  it('passes the result on, with its code when it is an error', async () => {
    const l = link();
    answerHostCall(
      l,
      (tool, input, id) => Promise.resolve({ isError: false, content: `${tool} ${JSON.stringify(input)} ${id}` }),
      call,
    );
    expect(await l.answered()).toEqual({
      t: 'host-result',
      seq: 3,
      isError: false,
      content: 'lookup {"q":1} tu',
      code: undefined,
    });
    answerHostCall(l, () => Promise.resolve({ isError: true, code: 'TOOL_UNKNOWN', content: 'no such tool' }), call);
    expect(await l.answered()).toMatchObject({ isError: true, code: 'TOOL_UNKNOWN', content: 'no such tool' });
  });

  it('makes a handler that throws a TOOL_HOST_FAILED result; after close, answers nothing', async () => {
    const l = link();
    answerHostCall(l, () => Promise.reject(new Error('aborted')), call);
    expect(await l.answered()).toEqual({
      t: 'host-result',
      seq: 3,
      isError: true,
      content: 'aborted',
      code: 'TOOL_HOST_FAILED',
    });
    l.closed = true;
    const late = Promise.resolve({ isError: false as const, content: 'late' });
    answerHostCall(l, () => late, call);
    // awaited after answerHostCall took it: its callback has run
    await late;
    expect(l.sent).toHaveLength(1);
  });
});

describe('answerOutputCheck', () => {
  const check = { t: 'output-check', seq: 4, text: '{"a":1}' } as const;

  it('passes the verdict on; without a schema here, or with one that throws, a mismatch', async () => {
    const l = link();
    answerOutputCheck(
      l,
      (text) => Promise.resolve(text === '{"a":1}' ? { ok: true } : { ok: false, errors: 'no' }),
      check,
    );
    expect(await l.answered()).toEqual({ t: 'output-verdict', seq: 4, ok: true, errors: undefined });
    answerOutputCheck(l, undefined, check);
    expect(await l.answered()).toEqual({
      t: 'output-verdict',
      seq: 4,
      ok: false,
      errors: 'no output schema is held here',
    });
    answerOutputCheck(l, () => Promise.reject(new Error('bad schema')), check);
    expect(await l.answered()).toEqual({
      t: 'output-verdict',
      seq: 4,
      ok: false,
      errors: 'the output schema failed: bad schema',
    });
  });
});

describe('servePort: the main thread’s end of a fork’s port', () => {
  function received(port: MessagePort): () => Promise<MainToWorker> {
    return () => new Promise((resolve) => port.once('message', resolve));
  }

  it('grants and releases permits, passes events on, resolves `ended`, and releases held permits on close', async () => {
    const { port1, port2 } = new MessageChannel();
    const g = gate();
    const events: unknown[] = [];
    const served = servePort(
      port1,
      g.gate,
      signal,
      (e) => events.push(e),
      () => Promise.resolve({ allow: true }),
    );
    const next = received(port2);
    let answer = next();
    port2.postMessage({ t: 'acquire', seq: 1, turn: 1, first: true });
    expect(await answer).toEqual({ t: 'grant', seq: 1, slot: 2 });
    answer = next();
    port2.postMessage({ t: 'acquire', seq: 2, turn: 1, first: false });
    expect(await answer).toEqual({ t: 'grant', seq: 2, slot: 2 });
    port2.postMessage({ t: 'release', seq: 1 });
    port2.postMessage({ t: 'event', event: { type: 'turn-start', turn: 1, at: 0 } });
    // the default host tools: none registered
    answer = next();
    port2.postMessage({ t: 'host-call', seq: 9, tool: 'lookup', input: {}, toolUseId: 'tu' });
    expect(await answer).toMatchObject({ t: 'host-result', seq: 9, isError: true, code: 'TOOL_UNKNOWN' });
    port2.postMessage({ t: 'end' });
    await served.ended;
    expect(g.released).toEqual([1]);
    expect(events).toEqual([{ type: 'turn-start', turn: 1, at: 0 }]);
    served.close();
    // the permit the worker still held (seq 2) goes back to the gate
    expect(g.released).toEqual([1, 2]);
    port2.close();
  });
});
