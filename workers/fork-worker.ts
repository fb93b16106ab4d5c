// Thin Piscina entry: attach to the frozen prefix, then hand over to src/. Nothing testable
// lives here.
import { threadId } from 'node:worker_threads';
import type { ForkTask } from '../src/core/pool/protocol.ts';
import { runForkTask } from '../src/core/pool/worker-run.ts';
import type { ForkOutcome } from '../src/core/loop/types.ts';
import { attachFrozenPrefix } from '../src/core/prefix/sab.ts';
import { openForkWire } from '../src/providers/registry.ts';

export interface ProbeTask {
  kind: 'probe';
  prefix: SharedArrayBuffer;
}

export interface ProbeResult {
  threadId: number;
  sha256: string;
  byteLength: number;
  /** True when the task's buffer is shared memory, not a copy. */
  shared: boolean;
}

function probe(task: ProbeTask): ProbeResult {
  const attached = attachFrozenPrefix(task.prefix);
  return {
    threadId,
    sha256: attached.sha256,
    byteLength: attached.byteLength,
    shared: task.prefix instanceof SharedArrayBuffer,
  };
}

export default function run(task: ProbeTask | ForkTask): ProbeResult | Promise<ForkOutcome> {
  return task.kind === 'probe' ? probe(task) : runForkTask(task, openForkWire);
}
