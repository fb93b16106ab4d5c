import { Option, type Command } from 'commander';
import { untilSignal } from '../until-signal.ts';
import { z } from 'zod';
import { latencyNameSchema } from '../../integrations/emulator/latency.ts';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import type { EmulatorOptions } from '../../integrations/emulator/options.ts';
import { ReplayModel } from '../../integrations/emulator/scripts/replay.ts';
import { BUILTIN_SCRIPTS } from '../../integrations/emulator/scripts/registry.ts';
import { startEmulator } from '../../integrations/emulator/start.ts';
import { EMULATOR_APIS } from '../../integrations/emulator/openai/rules.ts';
import { HEADER_NAME } from '../../core/wire/credentials.ts';
import { parseFlags } from '../flags.ts';
import { resolveRateLimits } from '../../core/rate-limits/presets.ts';
import { printOut, printErr } from '../terminal-safe.ts';

const intFlag = (min: number, max: number) =>
  z
    .string()
    .regex(/^-?\d+$/, 'expected an integer')
    .transform(Number)
    .pipe(z.number().min(min, `at least ${min}`).max(max, `at most ${max}`));

const optionsSchema = z.object({
  api: z.enum(EMULATOR_APIS, { error: `expected ${EMULATOR_APIS.join(', ')}` }).default('anthropic'),
  host: z.string().min(1).default('127.0.0.1'),
  port: intFlag(0, 65535).default(0),
  latency: latencyNameSchema.default('fast'),
  faults: z.string().default(''),
  seed: intFlag(-2147483648, 2147483647).optional(),
  logDir: z.string().min(1).optional(),
  cacheBillingBlock: z.boolean().default(false),
  script: z.string().min(1).default('echo'),
  replay: z.string().min(1).optional(),
  modelTable: z.string().min(1).optional(),
  rateLimits: z.string().min(1, 'expected start, build, scale or a JSON file').optional(),
  maskHeader: z.array(z.string().regex(HEADER_NAME, 'expected a header name')).default([]),
  maxConnections: intFlag(1, 1_000_000).optional(),
  headersTimeout: intFlag(1, 2_147_483_647).optional(),
  requestTimeout: intFlag(1, 2_147_483_647).optional(),
});

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * Register `forkcache emulator`: serve the Anthropic-compatible emulator until SIGINT/SIGTERM,
 * then close gracefully (in-flight requests finish first).
 */
export function registerEmulatorCommand(program: Command): void {
  program
    .command('emulator')
    .description(
      'Serve a local Anthropic-compatible Messages API with the prompt-cache rules (scripted models, no API key).',
    )
    .option(
      '--api <api>',
      "anthropic (Messages API) | openai | dashscope | deepseek (Chat Completions with that provider's cache rule and usage fields)",
      'anthropic',
    )
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <n>', 'TCP port; 0 picks a free one', '0')
    .option('--latency <mode>', 'off | fast | realistic', 'fast')
    .option(
      '--faults <spec>',
      'injected faults, e.g. 429:0.1,529:0.05,stream-error:0.05,reset:0.02,cut:0.02,slow:0.1',
      '',
    )
    .option('--seed <n>', 'seed for fault draws (default 0) and ids (default: random, unique across restarts)')
    .option(
      '--log-dir <dir>',
      'write one JSON file per exchange (request, headers with keys masked, response, cache plan)',
    )
    .option(
      '--cache-billing-block',
      "count Claude Code's x-anthropic-billing-header system block and hash it into the cache key",
      false,
    )
    .option(
      '--script <name>',
      `default scripted model: ${Object.keys(BUILTIN_SCRIPTS).join(' | ')} (| replay with --replay)`,
      'echo',
    )
    .option('--replay <file>', 'JSON fixture for the replay model (registered as "replay")')
    .option(
      '--model-table <file>',
      'model catalogue JSON merged over the built-in one (adds models the stand-in API serves, overrides minimum cacheable lengths)',
    )
    .option(
      '--rate-limits <tier|file>',
      "the API's rate limits per key and model class: start | build | scale (the published tables; the 5.5 models' rows are placeholders) | a JSON file ({ preset?, classes?, windowSeconds?, ramp?, spendLimitUsd? })",
    )
    .option(
      '--mask-header <name>',
      'mask this header too in the --log-dir files (repeatable; the credential headers always are)',
      collect,
    )
    .option('--max-connections <n>', 'open connections at once (default 1024)')
    .option('--headers-timeout <ms>', 'a client must send its headers within this (default 60000)')
    .option('--request-timeout <ms>', 'a client must send its whole request within this (default 300000)')
    .action(async (raw: Record<string, unknown>) => {
      const o = parseFlags(optionsSchema, raw);
      const options: EmulatorOptions = {
        api: o.api,
        host: o.host,
        port: o.port,
        latency: o.latency,
        faults: o.faults,
        ...(o.seed === undefined ? {} : { seed: o.seed }),
        ...(o.logDir === undefined ? {} : { logDir: o.logDir }),
        cacheBillingBlock: o.cacheBillingBlock,
        maskHeaders: o.maskHeader,
        ...(o.maxConnections === undefined ? {} : { maxConnections: o.maxConnections }),
        ...(o.headersTimeout === undefined ? {} : { headersTimeoutMs: o.headersTimeout }),
        ...(o.requestTimeout === undefined ? {} : { requestTimeoutMs: o.requestTimeout }),
        script: o.script,
        ...(o.replay === undefined ? {} : { scripts: [ReplayModel.fromFile(o.replay)] }),
        ...(o.modelTable === undefined ? {} : { modelTable: loadCatalogue(o.modelTable) }),
        ...(o.rateLimits === undefined ? {} : { rateLimits: resolveRateLimits(o.rateLimits) }),
      };
      const emulator = await startEmulator(options);
      // listening before the line says so: a signal sent on reading it closes the server properly
      const stop = untilSignal();
      printOut(`forkcache emulator listening on ${emulator.url}\n`);
      if (o.api !== 'anthropic')
        printErr(
          `forkcache emulator: ${o.api} Chat Completions API; base URL ${emulator.url}${o.api === 'dashscope' ? '/compatible-mode/v1' : '/v1'}\n`,
        );
      if (emulator.rateLimits.table)
        printErr(`forkcache emulator: rate limits from ${emulator.rateLimits.table.source}\n`);
      const signal = await stop;
      printErr(`forkcache emulator: ${signal}, closing\n`);
      await emulator.close();
    });
}
