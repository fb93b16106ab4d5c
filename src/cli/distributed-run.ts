import type { FanOutResult } from '../core/agent/fork-handle.ts';
import { type DistributedOptions, shownRedisUrl } from '../integrations/distributed/keys.ts';
import { ForkcacheError } from '../core/util/errors.ts';
import type { Endpoint } from './endpoint.ts';
import { resumeCommand } from './output/resume-hint.ts';
import { notDoneForks } from './output/summary-table.ts';
import { sandboxLine } from '../core/tools/sandbox/report.ts';

/**
 * The engine's `distributed` option, or none. Hosts send requests only to their own endpoint,
 * so an emulator embedded in this process (on a port no host knows) cannot serve them: that
 * is refused here (the embedded emulator closed), with the way to do it, instead of every job
 * being refused by its host.
 */
export async function distributedFor(
  flags: { redis?: string | undefined; redisTimeoutMs?: number | undefined },
  target: Pick<Endpoint, 'kind' | 'close'>,
): Promise<DistributedOptions | undefined> {
  if (!flags.redis) return undefined;
  if (target.kind === 'emulator') {
    await target.close();
    throw new ForkcacheError(
      'INVALID_FLAG',
      "--redis: worker hosts send requests only to their own endpoint, and this run's embedded emulator has a port no host knows: start one (`forkcache emulator --port 4000`), give the hosts and this run its URL (ANTHROPIC_BASE_URL=http://127.0.0.1:4000, or the provider's *_BASE_URL) and a key, and pass --api real",
      { data: { field: 'redis' } },
    );
  }
  return { redis: flags.redis, ...(flags.redisTimeoutMs ? { redisTimeoutMs: flags.redisTimeoutMs } : {}) };
}

/**
 * The line that says a run ended because Redis was lost: why, how many forks are not done,
 * and how to continue (the URL without its password: the user adds it back).
 */
export function redisLostLine(result: FanOutResult, redis: string | undefined): string | undefined {
  const lost = result.forks.filter((f) => f.error?.code === 'REDIS_LOST');
  if (lost.length === 0 || !redis) return undefined;
  const shown = shownRedisUrl(redis);
  const notDone = notDoneForks(result).length;
  const dir = result.summary.run_dir;
  const next = dir ? `; continue with: ${resumeCommand(dir, ['--redis', shown])}` : '';
  const password = shown === redis ? '' : ' (add the password back to the URL)';
  return `forkcache: ${lost[0]!.error!.message}: ${notDone} fork(s) not done${next}${password}`;
}

/** What `run --redis` says before it starts instead of probing this machine, which runs no fork's bash. */
export const HOSTS_SANDBOX_LINE =
  'bash sandbox: each worker host applies its own, probed there (each host says which when the run ends)';

/**
 * Each host's sandbox as that host reported it for the forks it ran (signed progress), and
 * what its ceilings clamped: the run's last word on where the forks' commands ran.
 */
export function hostSandboxLines(result: FanOutResult): string[] {
  const lines = Object.entries(result.summary.host_sandboxes ?? {}).map(([id, report]) => {
    if (report === null) return `host ${id}: ran no command of these forks`;
    if (report.kind === 'none')
      return `host ${id}: bash is NOT sandboxed on that host (${report.reason ?? 'no sandbox'}): the forks' commands ran with its rights`;
    return sandboxLine(report)
      .split('\n')
      .map((line) => `host ${id}: ${line}`)
      .join('\n');
  });
  for (const fork of result.forks)
    if (fork.host && fork.host.clamped.length > 0)
      lines.push(`host ${fork.host.id}: ${fork.forkId} clamped to its ceilings: ${fork.host.clamped.join('; ')}`);
  return lines;
}
