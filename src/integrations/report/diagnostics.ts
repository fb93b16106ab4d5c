import type { FanOutFiles } from './run-files.ts';
import type { ForkRow, RequestPoint } from './run-types.ts';
import { fanOutSharedReads } from '../../core/ledger/summary.ts';

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * Drift and cache-miss findings, from what the run directory records (the ledger's rules in
 * docs/architecture.md): every fan-out request should read the whole shared prefix except the
 * tokens that were not cached yet, which exactly one request writes; each later turn of a fork
 * should read at least what its previous turn read and wrote. Empty when the run was clean.
 */
export function missDiagnostics(files: FanOutFiles, requests: RequestPoint[], forks: ForkRow[]): string[] {
  const out: string[] = [];
  const { summary, manifest } = files;
  if (summary && summary.prefix.drift_events > 0)
    out.push(`${summary.prefix.drift_events} fork(s) stopped on prefix drift (FORK_PREFIX_DRIFT)`);
  for (const fork of forks) {
    if (fork.error?.code === 'FORK_PREFIX_DRIFT') out.push(`${fork.short}: ${fork.error.message}`);
  }
  for (const [forkId, transcript] of files.transcripts) {
    if (transcript.prefixSha256 && transcript.prefixSha256 !== manifest.prefix.sha256) {
      out.push(
        `${forkId}: transcript names prefix ${transcript.prefixSha256.slice(0, 16)}, the manifest ${manifest.prefix.sha256.slice(0, 16)}`,
      );
    }
  }
  if (summary && summary.cache.cache_efficiency < 1) {
    out.push(
      `cache efficiency ${summary.cache.cache_efficiency.toFixed(3)}: the fan-out requests read ${n(fanOutSharedReads(summary.cache))} of at most ${n(summary.cache.max_fanout_reads)} shared-prefix tokens from cache`,
    );
  }
  const shared = summary?.prefix.shared_tokens ?? null;
  // The ledger keys a fan-out by the prefix id (the hash's first 16 hex digits).
  const byFanout = summary?.cache.by_fanout ?? [];
  const uncached =
    (byFanout.find((f) => f.key === manifest.prefix.sha256.slice(0, 16)) ?? byFanout[0])?.uncached_at_start ?? 0;
  if (shared !== null) out.push(...firstRequestMisses(requests, shared, uncached));
  out.push(...laterTurnMisses(requests));
  return out;
}

/** Fan-out requests that read less of the shared prefix than they could have. */
function firstRequestMisses(requests: RequestPoint[], shared: number, uncached: number): string[] {
  const out: string[] = [];
  let writerSeen = false;
  for (const r of requests) {
    if (r.kind === 'fork' && r.turn !== 1) continue;
    const read = r.usage.cache_read_input_tokens;
    if (read >= shared) continue;
    // The shared tokens not cached at the start must be written once: the first request
    // that reads the rest is that writer, not a miss.
    if (!writerSeen && read >= shared - uncached) {
      writerSeen = true;
      continue;
    }
    out.push(
      `${r.label}: read ${n(read)} of ${n(shared)} shared prefix tokens from cache (missed ${n(shared - read)}; sent before the shared entry was readable?)`,
    );
  }
  return out;
}

/** Later turns of a fork that read less than the turn before them had cached. */
function laterTurnMisses(requests: RequestPoint[]): string[] {
  const out: string[] = [];
  const previous = new Map<string, RequestPoint>();
  for (const r of requests) {
    if (r.kind !== 'fork' || !r.forkId) continue;
    const before = previous.get(r.forkId);
    previous.set(r.forkId, r);
    if (!before || before.turn !== r.turn - 1) continue;
    const cached = before.usage.cache_read_input_tokens + before.usage.cache_creation_input_tokens;
    if (r.usage.cache_read_input_tokens < cached) {
      out.push(
        `${r.label}: read ${n(r.usage.cache_read_input_tokens)} tokens from cache, its previous turn had cached ${n(cached)} (expired, or the prefix changed?)`,
      );
    }
  }
  return out;
}
