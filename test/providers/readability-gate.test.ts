import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/util/clock.ts';
import { apiLimiter, WarmGate } from '../../src/core/engine/warm-gate.ts';
import type { Readability } from '../../src/core/wire/providers.ts';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The warmer's permit, and whether a sibling's first request got through after each step. */
async function sibling(
  readable: Readability,
): Promise<{ afterAcquire: boolean; afterStart: boolean; afterEnd: boolean }> {
  const gate = new WarmGate({
    strategy: 'first-child',
    limit: apiLimiter(8),
    ttlMs: 300_000,
    clock: new ManualClock(),
    readable,
  });
  const warmer = await gate.acquire({ turn: 1, first: true });
  let through = false;
  void gate.acquire({ turn: 1, first: true }).then(() => (through = true));
  await flush();
  const afterAcquire = through;
  warmer.started({ status: 200 });
  await flush();
  const afterStart = through;
  warmer.release({ status: 200 });
  await flush();
  return { afterAcquire, afterStart, afterEnd: through };
}

describe('the warm-first gate follows the provider’s readability rule', () => {
  it('Anthropic: siblings go once the warmer’s response begins', async () => {
    expect(await sibling('response-start')).toEqual({ afterAcquire: false, afterStart: true, afterEnd: true });
  });

  it('DashScope, DeepSeek, OpenAI: siblings wait until the warmer’s response completes', async () => {
    expect(await sibling('response-end')).toEqual({ afterAcquire: false, afterStart: false, afterEnd: true });
  });

  it('vLLM/SGLang: nothing to wait for inside one engine', async () => {
    expect(await sibling('none')).toEqual({ afterAcquire: true, afterStart: true, afterEnd: true });
  });

  it('a warmer that fails after its response began does not open the gate on a completion provider: the next first request warms', async () => {
    const gate = new WarmGate({
      strategy: 'first-child',
      limit: apiLimiter(8),
      ttlMs: 300_000,
      clock: new ManualClock(),
      readable: 'response-end',
    });
    const warmer = await gate.acquire({ turn: 1, first: true });
    const next = gate.acquire({ turn: 1, first: true });
    warmer.started({ status: 200 });
    warmer.release({ status: null });
    const second = await next; // it became the warmer
    expect(gate.state).not.toBe('warm');
    second.started({ status: 200 });
    second.release({ status: 200 });
    expect(gate.state).toBe('warm');
    expect(gate.warmups).toBe(2);
  });
});
