import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/util/clock.ts';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { runForkLoop } from '../../src/core/loop/run-fork.ts';
import { freeze } from '../../src/core/prefix/freeze.ts';
import { openForkWire } from '../../src/providers/registry.ts';
import { createToolExecutor } from '../../src/core/tools/executor.ts';
import { bigSnapshot, workspace } from '../core/engine/helpers.ts';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator;
// the first request of each tagged snapshot meets the fault; every later one goes through
const faulted = new Set<string>();
let fault: '429' | '500' | 'none' = 'none';

beforeAll(async () => {
  emulator = await startEmulator({
    latency: 'off',
    api: 'dashscope',
    faultFor: (body) => {
      const key = JSON.stringify((body as { messages: unknown[] }).messages[0]).slice(0, 200);
      if (fault === 'none' || faulted.has(key)) return 'none';
      faulted.add(key);
      return fault;
    },
  });
});
afterAll(async () => {
  await emulator.close();
});

/** One fork's loop, in-thread, through the DashScope wire and the real openai client. */
async function runOne(tag: string) {
  const prefix = freeze(bigSnapshot(tag), { provider: 'dashscope', layout: 'qwen' });
  const wire = openForkWire(
    {
      provider: 'dashscope',
      baseURL: `${emulator.url}/v1`,
      apiKey: 'k',
      maxRetries: 0,
      timeoutMs: 10_000,
      headers: {},
    },
    prefix,
  );
  const clock = new ManualClock();
  const events: string[] = [];
  const run = runForkLoop({
    prefix,
    child: prefix.child('read a.ts and report'),
    transport: wire.transport,
    body: wire.body,
    tools: createToolExecutor({ workspace: workspace() }),
    clock,
    retry: { retries: 2, baseMs: 0, maxMs: 0 },
    onEvent: (e) => events.push(e.type === 'turn-retry' ? `retry ${String(e.error.data?.['status'])}` : e.type),
  });
  return { outcome: await run, events };
}

describe('the loop on a Chat Completions wire', () => {
  it('a 429 from the OpenAI-compatible API is retried like the Messages API one, and the fork completes', async () => {
    fault = '429';
    const { outcome, events } = await runOne(`r429-${Date.now()}:`);
    expect(outcome.status).toBe('completed');
    expect(events).toContain('retry 429');
  });

  it('a 500 is retried too; a bad request is not: FORK_API_ERROR with the status and the OpenAI error type', async () => {
    fault = '500';
    const retried = await runOne(`r500-${Date.now()}:`);
    expect(retried.outcome.status).toBe('completed');
    expect(retried.events).toContain('retry 500');
    fault = 'none';
    const prefix = freeze(bigSnapshot(`bad-${Date.now()}:`), { provider: 'dashscope' });
    const wire = openForkWire(
      {
        provider: 'dashscope',
        baseURL: `${emulator.url}/v1`,
        apiKey: 'k',
        maxRetries: 0,
        timeoutMs: 10_000,
        headers: {},
      },
      prefix,
    );
    // n = 2: the emulator serves one choice per request, as a 400
    const outcome = await runForkLoop({
      prefix,
      child: prefix.child('x'),
      transport: wire.transport,
      body: (child, perRequest, marker) => wire.body(child, { ...perRequest, n: 2 }, marker),
      tools: createToolExecutor({ workspace: workspace() }),
      retry: { retries: 2, baseMs: 0, maxMs: 0 },
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({
      code: 'FORK_API_ERROR',
      data: { status: 400, type: 'invalid_request_error' },
    });
    expect(outcome.failedAttempts).toEqual([]);
  });
});
