// Thin Piscina entry: hand each fork's task over to src/, with the providers' registry (core
// names no provider: the worker hands core the registry, as the package's entry does, and gives
// it the way to open a fork's wire). Nothing testable lives here.
import type { ForkTask } from '../src/core/pool/protocol.ts';
import { runForkTask } from '../src/core/pool/worker-run.ts';
import type { ForkOutcome } from '../src/core/loop/types.ts';
import { useProviders } from '../src/core/engine/providers-registered.ts';
import { openForkWire, PROVIDERS } from '../src/providers/registry.ts';

useProviders(PROVIDERS);

export default function run(task: ForkTask): Promise<ForkOutcome> {
  return runForkTask(task, openForkWire);
}
