import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/integrations/emulator/start.ts';
import { hasCode } from '../../src/core/util/errors.ts';
import { describeFailure } from '../../src/core/loop/send-turn.ts';
import { withSuffix } from '../../src/core/prefix/body.ts';
import { freeze } from '../../src/core/prefix/freeze.ts';
import { openForkWire } from '../../src/providers/registry.ts';
import { bigSnapshot } from '../core/engine/helpers.ts';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator;
let requests = 0;

beforeAll(async () => {
  emulator = await startEmulator({ latency: 'off', api: 'openai' });
  emulator.on('request-start', () => requests++);
});
afterAll(async () => {
  await emulator.close();
});

describe('the wire-level drift check on Chat Completions', () => {
  it('a body that does not begin with the frozen head never leaves the process: FORK_PREFIX_DRIFT, not a silent miss', async () => {
    const prefix = freeze(bigSnapshot(`drift-${Date.now()}:`), { provider: 'openai' });
    const wire = openForkWire(
      { provider: 'openai', baseURL: `${emulator.url}/v1`, apiKey: 'k', maxRetries: 0, timeoutMs: 10_000, headers: {} },
      prefix,
    );
    const good = wire.body(prefix.child('read a.ts'), { max_tokens: 64, stream: true }, false);
    const sent = await wire.transport.send(good, {});
    expect(sent.message.stop_reason).toBe('end_turn');
    const before = requests;
    // one byte of the head re-rendered differently (a changed flag, a re-ordered tool, ...)
    const head = new Uint8Array(prefix.head);
    head[prefix.byteLength - 10] = head[prefix.byteLength - 10] === 0x61 ? 0x62 : 0x61;
    const drifted = withSuffix(head, new TextDecoder().decode(good.subarray(prefix.byteLength)));
    const failure = await wire.transport.send(drifted, {}).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(describeFailure(failure)).toMatchObject({
      code: 'FORK_PREFIX_DRIFT',
      data: { offset: prefix.byteLength - 10 },
    });
    expect(hasCode(describeFailure(failure), 'FORK_PREFIX_DRIFT')).toBe(true);
    expect(requests).toBe(before);
  });
});
