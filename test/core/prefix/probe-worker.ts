// A worker of this test only: it attaches to the frozen prefix the way the fork worker does and
// reports what it saw, so the test can check that every thread reads the same shared memory.
// It lives here, not in the shipped worker (workers/fork-worker.ts), which runs only forks.
import { threadId } from 'node:worker_threads';
import { attachFrozenPrefix } from '../../../src/core/prefix/sab.ts';

export interface ProbeTask {
  prefix: SharedArrayBuffer;
}

export interface ProbeResult {
  threadId: number;
  sha256: string;
  byteLength: number;
  /** True when the task's buffer is shared memory, not a copy. */
  shared: boolean;
}

export default function probe(task: ProbeTask): ProbeResult {
  const attached = attachFrozenPrefix(task.prefix);
  return {
    threadId,
    sha256: attached.sha256,
    byteLength: attached.byteLength,
    shared: task.prefix instanceof SharedArrayBuffer,
  };
}
