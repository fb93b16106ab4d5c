import { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { tsxLoaderUrl } from '../../../src/core/pool/worker-file.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { attachCount } from '../../../src/core/prefix/sab.ts';
import type { ProbeResult, ProbeTask } from './probe-worker.ts';
import { fixture } from '../../helpers.ts';

const THREADS = 3;
const pool = new Piscina({
  // the probe is this test's own worker (./probe-worker.ts), run from its source through tsx
  filename: fileURLToPath(new URL('./probe-worker.ts', import.meta.url)),
  execArgv: ['--import', tsxLoaderUrl()],
  minThreads: THREADS,
  maxThreads: THREADS,
  idleTimeout: 60_000,
  concurrentTasksPerWorker: 1,
});

afterAll(async () => {
  await pool.destroy();
});

describe('one SharedArrayBuffer, many workers', () => {
  it('every worker sees the same hash, verifies it once, and the memory is shared, not copied', async () => {
    // a large history so that a per-task copy would be visible in the buffer identity checks
    const request = fixture<Record<string, any>>('parent-request.json');
    request['messages'][0].content = 'x'.repeat(1 << 20);
    const prefix = freeze(captureSnapshot(request));
    const TASKS = 24;
    const results = await Promise.all(
      Array.from({ length: TASKS }, () => pool.run({ prefix: prefix.sab } satisfies ProbeTask) as Promise<ProbeResult>),
    );
    expect(new Set(results.map((r) => r.sha256))).toEqual(new Set([prefix.sha256]));
    expect(results.every((r) => r.shared && r.byteLength === prefix.byteLength)).toBe(true);
    const threads = new Set(results.map((r) => r.threadId));
    expect(threads.size).toBeGreaterThan(1);
    // Each worker incremented the counter in the SAB header once (hash verified once per
    // prefix per thread). The main thread sees those writes: the workers wrote to this very
    // memory, so no task received a copy.
    expect(attachCount(prefix.sab)).toBe(threads.size);
    expect(threads.size).toBeLessThanOrEqual(THREADS);
  });
});
