// Bench worker: holds fork-like tasks open so the main thread can measure memory while N forks
// are live at once. A task carries the frozen prefix the way the engine sends it (the shared
// SAB, attached and hash-checked once per thread) or as its own structured-cloned copy.
import { threadId } from 'node:worker_threads';
import { attachFrozenPrefix } from '../../src/core/prefix/sab.ts';

export interface HoldTask {
  /** The engine's way (a SharedArrayBuffer), or a baseline copy per task (a cloned string). */
  prefix: SharedArrayBuffer | string;
  /** [0]: tasks holding so far (incremented here); [1]: set to 1 by the main thread to release. */
  control: Int32Array;
}

export interface HoldResult {
  threadId: number;
  /** What this task held (bytes of the head, or characters of the copy). */
  held: number;
  /** This thread's heap, sampled once every task of the run was holding. */
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

// Node 20 has Atomics.waitAsync; the project's TypeScript lib (before ES2024) does not declare it.
const waitAsync = (
  Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { value: Promise<string> | string } }
).waitAsync;

export default async function run(task: HoldTask): Promise<HoldResult> {
  // Keep the reference in a local until the end: the task is "live" while it holds it.
  const held = typeof task.prefix === 'string' ? task.prefix : attachFrozenPrefix(task.prefix).head;
  Atomics.add(task.control, 0, 1);
  Atomics.notify(task.control, 0);
  if (Atomics.load(task.control, 1) === 0) await waitAsync(task.control, 1, 0).value;
  const memory = process.memoryUsage();
  return {
    threadId,
    held: held.length,
    heapUsed: memory.heapUsed,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
  };
}
