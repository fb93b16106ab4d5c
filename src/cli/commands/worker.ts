import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { ForkcacheError } from '../../core/util/errors.ts';
import { type HostTool, parseHostTools } from '../../core/tools/host-tools.ts';
import { z } from 'zod';
import { readJsonFile } from '../../core/util/json-file.ts';
import { importOptional } from '../../core/util/optional-import.ts';
import { permissionPolicySchema, type PermissionPolicy } from '../../core/tools/permissions.ts';
import { parseOrThrow } from '../../core/util/validation.ts';
import { EXECUTABLE_TOOL_NAMES, type ExecutableToolName } from '../../core/wire/tool-names.ts';
import { intFlag, parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { untilSignal } from '../until-signal.ts';
import { shownRedisUrl } from '../../integrations/distributed/keys.ts';
import { defaultCeilings, HOST_FLAGS, parseCeiling } from '../../integrations/distributed/jobs/rules.ts';
import { TOOL_FLAGS, type ToolFlagName } from '../../core/tools/tool-flags.ts';
import { printOut } from '../terminal-safe.ts';

const toolList = z
  .string()
  .transform((text) => text.split(',').map((t) => t.trim()))
  .pipe(z.array(z.enum(EXECUTABLE_TOOL_NAMES, { error: `expected tools among ${EXECUTABLE_TOOL_NAMES.join(', ')}` })));

const optionsSchema = z.object({
  redis: z.string({ error: 'required, e.g. redis://127.0.0.1:6379' }).regex(/^rediss?:\/\//, 'expected a redis:// URL'),
  queue: z.string().min(1).default('forkcache-forks'),
  threads: intFlag.pipe(z.number().min(1, 'at least 1')).default(2),
  concurrency: intFlag.pipe(z.number().min(1, 'at least 1')).optional(),
  lockMs: intFlag.pipe(z.number().min(500, 'at least 500')).default(30_000),
  redisTimeoutMs: FLAGS.redisTimeoutMs.schema.unwrap().default(30_000),
  allow: toolList.optional(),
  sandbox: z.enum(['auto', 'bwrap', 'none'], { error: 'expected auto, bwrap or none' }).default('auto'),
  permissions: z.string().min(1).optional(),
  root: z.array(z.string().min(1)).default([]),
  ceiling: z.array(z.string()).default([]),
  hostTools: z.string().min(1).optional(),
});

/** The module's default export, validated as host tools (`--host-tools ./tools.mjs: hostTools.x.execute: …`). */
async function loadHostTools(path: string): Promise<Record<string, HostTool>> {
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
  } catch (err) {
    throw new ForkcacheError('INVALID_FLAG', `--host-tools ${path}: cannot load it: ${(err as Error).message}`, {
      data: { field: 'hostTools' },
    });
  }
  if (typeof module.default !== 'object' || module.default === null)
    throw new ForkcacheError(
      'INVALID_FLAG',
      `--host-tools ${path}: expected a default export mapping tool names to handlers`,
      {
        data: { field: 'hostTools' },
      },
    );
  return parseHostTools(module.default, `--host-tools ${path}`);
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `--allow-network`: the flag of a tool flag a host must allow, and commander's key for it (`allowNetwork`). */
const allowFlag = (name: ToolFlagName): { flag: string; key: string } => ({
  flag: `--allow-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
  key: `allow${name[0]!.toUpperCase()}${name.slice(1)}`,
});

/** Register `forkcache worker --redis URL`: a host of the distributed backend. */
export function registerWorkerCommand(program: Command): void {
  const command = program
    .command('worker')
    .description(
      'serve fork jobs from Redis (BullMQ) with a local pool of worker threads, until SIGINT/SIGTERM; jobs must be signed with FORKCACHE_JOB_SECRET, and run with this host’s own endpoint, key and policy',
    )
    .addOption(flag('redis').makeOptionMandatory())
    .option('--queue <name>', 'BullMQ queue', 'forkcache-forks')
    .option('--threads <n>', 'worker threads of this host', '2')
    .option('--concurrency <n>', 'forks this host runs at once (default threads x 8)')
    .option(
      '--lock-ms <ms>',
      'a host silent for this long is presumed dead and its forks move to another host',
      '30000',
    )
    .addOption(flag('redisTimeoutMs', '30000'))
    .option('--allow <tools>', 'tools a job may allow, comma-separated (default: the file tools; bash only if listed)')
    .option('--sandbox <kind>', 'the weakest sandbox a job may ask bash to run in: auto | bwrap | none', 'auto');
  // one per tool flag of rule `host-flag` (job-rules.ts): a flag added there is a host option here
  for (const name of HOST_FLAGS) command.option(allowFlag(name).flag, `jobs may turn ${name} on: ${TOOL_FLAGS[name]}`);
  command
    .option('--permissions <file>', 'permission policy JSON combined with each job’s (the stricter decision wins)')
    .option(
      '--host-tools <module>',
      'an ES module whose default export maps tool names to host tool handlers ({ execute, readOnly? }): jobs whose forks call them run here',
    )
    .option('--root <dir>', 'jobs’ workspaces and run directories must lie under DIR (repeatable)', collect, [])
    .option(
      '--ceiling <path=n>',
      `the most a job may set a limit to; above it the job is clamped (repeatable; defaults: ${Object.entries(
        defaultCeilings(),
      )
        .map(([path, n]) => `${path}=${n}`)
        .join(', ')})`,
      collect,
      [],
    )
    .action(async (raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      // loaded here, not at the top: `forkcache --version` must not load bullmq (an optional peer);
      // and first, so that a missing one stops the command before it loads the host's tools
      const { startHostWorker } = await importOptional(
        'distributed',
        () => import('../../integrations/distributed/host/worker.ts'),
      );
      const permissions = opts.permissions
        ? (parseOrThrow(
            permissionPolicySchema,
            readJsonFile(opts.permissions, '--permissions', 'INVALID_FLAG'),
            'INVALID_FLAG',
            `--permissions ${opts.permissions}`,
          ) as PermissionPolicy)
        : undefined;
      const ceilings = opts.ceiling.map(parseCeiling);
      const hostTools = opts.hostTools ? await loadHostTools(opts.hostTools) : undefined;
      const host = await startHostWorker({
        redis: opts.redis,
        queue: opts.queue,
        threads: opts.threads,
        lockDurationMs: opts.lockMs,
        stalledIntervalMs: Math.max(250, Math.floor(opts.lockMs / 2)),
        redisTimeoutMs: opts.redisTimeoutMs,
        ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
        ...(opts.allow ? { allow: opts.allow as ExecutableToolName[] } : {}),
        sandbox: opts.sandbox,
        ...Object.fromEntries(HOST_FLAGS.map((name) => [name, raw[allowFlag(name).key] === true])),
        ...(permissions ? { permissions } : {}),
        ...(opts.root.length > 0 ? { roots: opts.root } : {}),
        ...(ceilings.length > 0 ? { ceilings: Object.fromEntries(ceilings) } : {}),
        ...(hostTools ? { hostTools } : {}),
      });
      // listening before the line says so: a signal sent on reading it closes the host properly
      const stop = untilSignal();
      printOut(
        `forkcache worker ${host.hostId} serving ${opts.queue} on ${shownRedisUrl(opts.redis)}\n  policy: ${host.policy}\n${host.sandbox
          .split('\n')
          .map((line) => `  ${line}\n`)
          .join('')}`,
      );
      await stop;
      await host.close();
    });
}
