import type { Command } from 'commander';
import { untilSignal } from '../until-signal.ts';
import { z } from 'zod';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import type { EmulatorOptions } from '../../integrations/emulator/options.ts';
import { ReplayModel } from '../../integrations/emulator/scripts/replay.ts';
import { BUILTIN_SCRIPTS } from '../../integrations/emulator/scripts/registry.ts';
import { startEmulator } from '../../integrations/emulator/start.ts';
import { EMULATOR_APIS } from '../../integrations/emulator/openai/rules.ts';
import { addAliases, flag, type FlagAliases, flagSchema, parseCommandFlags } from '../flag-table.ts';
import { resolveRateLimits } from '../../core/rate-limits/presets.ts';
import { printOut, printErr } from '../terminal-safe.ts';

/** `--api` was the emulator's name for `--provider` (one name, one meaning: run's `--api` is where requests go). */
const ALIASES: FlagAliases = {
  '--api <provider>': 'provider',
  // every duration is `-ms`
  '--headers-timeout <ms>': 'headersTimeoutMs',
  '--request-timeout <ms>': 'requestTimeoutMs',
};

const optionsSchema = flagSchema([
  'host',
  'port',
  'latency',
  'seed',
  'logDir',
  'modelTable',
  'maskHeader',
  'maxConnections',
  'headersTimeoutMs',
  'requestTimeoutMs',
]).extend({
  // the providers the emulator stands in for: the ones with a cache rule of their own
  provider: z.enum(EMULATOR_APIS, { error: `expected ${EMULATOR_APIS.join(', ')}` }).default('anthropic'),
  faults: z.string().default(''),
  cacheBillingBlock: z.boolean().default(false),
  script: z.string().min(1).default('echo'),
  replay: z.string().min(1).optional(),
  rateLimits: z.string().min(1, 'expected start, build, scale or a JSON file').optional(),
});

/**
 * Register `forkcache emulator`: serve the Anthropic-compatible emulator until SIGINT/SIGTERM,
 * then close gracefully (in-flight requests finish first).
 */
export function registerEmulatorCommand(program: Command): void {
  const command = program
    .command('emulator')
    .description(
      'Serve a local Anthropic-compatible Messages API with the prompt-cache rules (scripted models, no API key).',
    )
    .addOption(flag('provider', 'anthropic'))
    .addOption(flag('host', '127.0.0.1'))
    .addOption(flag('port', '0'))
    .addOption(flag('latency', 'fast'))
    .option(
      '--faults <spec>',
      'injected faults, e.g. 429:0.1,529:0.05,stream-error:0.05,reset:0.02,cut:0.02,slow:0.1',
      '',
    )
    .addOption(flag('seed'))
    .addOption(flag('logDir'))
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
    .addOption(flag('modelTable'))
    .option(
      '--rate-limits <tier|file>',
      "the API's rate limits per key and model class: start | build | scale (the published tables; the 5.5 models' rows are placeholders) | a JSON file ({ preset?, classes?, windowSeconds?, ramp?, spendLimitUsd? })",
    )
    .addOption(flag('maskHeader'))
    .addOption(flag('maxConnections'))
    .addOption(flag('headersTimeoutMs'))
    .addOption(flag('requestTimeoutMs'));
  addAliases(command, ALIASES);
  command.action(async (raw: Record<string, unknown>) => {
    const o = parseCommandFlags(optionsSchema, raw, ALIASES);
    const options: EmulatorOptions = {
      api: o.provider,
      host: o.host,
      port: o.port,
      latency: o.latency,
      faults: o.faults,
      ...(o.seed === undefined ? {} : { seed: o.seed }),
      ...(o.logDir === undefined ? {} : { logDir: o.logDir }),
      cacheBillingBlock: o.cacheBillingBlock,
      maskHeaders: o.maskHeader,
      ...(o.maxConnections === undefined ? {} : { maxConnections: o.maxConnections }),
      ...(o.headersTimeoutMs === undefined ? {} : { headersTimeoutMs: o.headersTimeoutMs }),
      ...(o.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: o.requestTimeoutMs }),
      script: o.script,
      ...(o.replay === undefined ? {} : { scripts: [ReplayModel.fromFile(o.replay)] }),
      ...(o.modelTable === undefined ? {} : { modelTable: loadCatalogue(o.modelTable) }),
      ...(o.rateLimits === undefined ? {} : { rateLimits: resolveRateLimits(o.rateLimits) }),
    };
    const emulator = await startEmulator(options);
    // listening before the line says so: a signal sent on reading it closes the server properly
    const stop = untilSignal();
    printOut(`forkcache emulator listening on ${emulator.url}\n`);
    if (o.provider !== 'anthropic')
      printErr(
        `forkcache emulator: ${o.provider} Chat Completions API; base URL ${emulator.url}${o.provider === 'dashscope' ? '/compatible-mode/v1' : '/v1'}\n`,
      );
    if (emulator.rateLimits.table)
      printErr(`forkcache emulator: rate limits from ${emulator.rateLimits.table.source}\n`);
    const signal = await stop;
    printErr(`forkcache emulator: ${signal}, closing\n`);
    await emulator.close();
  });
}
