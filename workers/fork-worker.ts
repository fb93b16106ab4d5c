// Thin Piscina entry: hand each fork's task over to src/. Nothing testable lives here.
import type { ForkTask } from '../src/core/pool/protocol.ts';
import { runForkTask } from '../src/core/pool/worker-run.ts';
import type { ForkOutcome } from '../src/core/loop/types.ts';

export default function run(task: ForkTask): Promise<ForkOutcome> {
  return runForkTask(task);
}
