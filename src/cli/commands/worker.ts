import type { Command } from 'commander';
import { z } from 'zod';
import { importOptional } from '../../optional-import.ts';
import { intFlag, parseFlags } from '../flags.ts';

const optionsSchema = z.object({
  redis: z.string({ error: 'required, e.g. redis://127.0.0.1:6379' }).regex(/^rediss?:\/\//, 'expected a redis:// URL'),
  queue: z.string().min(1).default('forkcache-forks'),
  threads: intFlag.pipe(z.number().min(1, 'at least 1')).default(2),
  concurrency: intFlag.pipe(z.number().min(1, 'at least 1')).optional(),
  lockMs: intFlag.pipe(z.number().min(500, 'at least 500')).default(30_000),
});

/** Register `forkcache worker --redis URL`: a host of the distributed backend. */
export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('serve fork jobs from Redis (BullMQ) with a local pool of worker threads, until SIGINT/SIGTERM')
    .requiredOption('--redis <url>', 'Redis URL, e.g. redis://127.0.0.1:6379')
    .option('--queue <name>', 'BullMQ queue', 'forkcache-forks')
    .option('--threads <n>', 'worker threads of this host', '2')
    .option('--concurrency <n>', 'forks this host runs at once (default threads x 8)')
    .option('--lock-ms <n>', 'a host silent for this long is presumed dead and its forks move to another host', '30000')
    .action(async (raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      // loaded here, not at the top: `forkcache --version` must not load bullmq (an optional peer)
      const { startHostWorker } = await importOptional('distributed', () => import('../../distributed/host-worker.ts'));
      const host = await startHostWorker({
        redis: opts.redis,
        queue: opts.queue,
        threads: opts.threads,
        lockDurationMs: opts.lockMs,
        stalledIntervalMs: Math.max(250, Math.floor(opts.lockMs / 2)),
        ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
      });
      process.stdout.write(
        `forkcache worker ${host.hostId} serving ${opts.queue} on ${opts.redis.replace(/\/\/[^@]*@/, '//')}\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = (): void => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await host.close();
    });
}
