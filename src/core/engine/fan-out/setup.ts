import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { lockRunDir, type WriterLock } from '../../run-dir/writer-lock.ts';
import { describeSandbox, type SandboxReport } from '../../tools/sandbox/report.ts';
import type { ResolvedEngineOptions } from '../options.ts';

/**
 * A fan-out id not used yet in the runs directory `root`, its directory created and locked:
 * another engine (an earlier run of the same plan, or one running now) may have taken
 * `fo001-…` already, and transcripts must never be shared. Creating the directory (never
 * recursively) is what claims an id; the writer lock then keeps a `resume` out while it runs.
 */
export function openFanOutDir(
  root: string | undefined,
  nextId: () => string,
): { id: string; runDir: string | undefined; lock?: WriterLock } {
  for (;;) {
    const id = nextId();
    if (!root) return { id, runDir: undefined };
    mkdirSync(root, { recursive: true });
    try {
      mkdirSync(join(root, id));
    } catch (err) {
      if ((err as { code?: unknown }).code === 'EEXIST') continue;
      throw err;
    }
    return { id, runDir: join(root, id), lock: lockRunDir(join(root, id)) };
  }
}

/** Where the forks' bash runs (the summary says it); undefined when they cannot use bash. */
export function sandboxReportFor(options: ResolvedEngineOptions, allow: readonly string[]): SandboxReport | undefined {
  if (!allow.includes('bash')) return undefined;
  try {
    return describeSandbox(options.sandbox, {
      network: options.network,
      limits: options.toolLimits,
      isolation: options.isolation,
    });
  } catch {
    return undefined; // `bwrap` asked for and missing: every fork's executor says so itself
  }
}
