import { Option, type Command } from 'commander';
import { untilSignal } from '../until-signal.ts';
import { z } from 'zod';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { intFlagIn } from '../flags.ts';
import { addAliases, flag, type FlagAliases, flagSchema, parseCommandFlags } from '../flag-table.ts';
import { chmodSync, writeFileSync } from 'node:fs';
import { importOptional } from '../../core/util/optional-import.ts';
import { printOut, printErr } from '../terminal-safe.ts';
import { requireFeatures } from '../optional-features.ts';

const bytes = intFlagIn(1, Number.MAX_SAFE_INTEGER);

/** Old spellings, hidden: every duration is `-ms`. */
const ALIASES: FlagAliases = {
  '--warm-wait <ms>': 'warmWaitMs',
  '--headers-timeout <ms>': 'headersTimeoutMs',
  '--request-timeout <ms>': 'requestTimeoutMs',
  '--upstream-timeout <ms>': 'upstreamTimeoutMs',
};

const optionsSchema = flagSchema([
  'host',
  'port',
  'logDir',
  'json',
  'modelTable',
  'maskHeader',
  'maxConnections',
  'headersTimeoutMs',
  'requestTimeoutMs',
]).extend({
  upstream: z
    .string()
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'expected an http:// or https:// URL'),
  warmFirst: z.boolean().default(false),
  warmWaitMs: intFlagIn(0, 600_000),
  stripBillingBlock: z.boolean().default(false),
  // the report is written on exit, to a file named here (the shared --report's value is required)
  report: z.string({ error: 'expected a file name' }).min(1, 'expected a file name').optional(),
  maxBodyBytes: bytes.optional(),
  maxInFlightBytes: bytes.optional(),
  upstreamTimeoutMs: intFlagIn(1, 2_147_483_647).optional(),
  mcp: z.boolean().default(false),
  mcpConfig: z.string().min(1, 'expected a file name').optional(),
  mcpWorkspace: z.string().min(1, 'expected a directory').optional(),
  mcpRunsDir: z.string().min(1, 'expected a directory').optional(),
  mcpRunDir: z.string().min(1, 'expected a directory').optional(),
  mcpAllowBash: z.boolean().default(false),
});

/**
 * Register `forkcache proxy`: an Anthropic-compatible reverse proxy with a cache ledger, until
 * SIGINT/SIGTERM; then it drains, prints the `--json` summary and writes the `--report`.
 */
export function registerProxyCommand(program: Command): void {
  const command = program
    .command('proxy')
    .description(
      'Proxy any client to the Anthropic API (ANTHROPIC_BASE_URL=...) and show, and fix, the cache economics of its fan-outs.',
    )
    .option(
      '--upstream <url>',
      'where requests go: the real API, a gateway, or `forkcache emulator`',
      'https://api.anthropic.com',
    )
    .addOption(flag('host', '127.0.0.1'))
    .addOption(flag('port', '0'))
    .option(
      '--warm-first',
      'hold siblings sharing a prefix that is still being written until its writer has begun (bounded)',
    )
    .option('--warm-wait-ms <ms>', 'the longest --warm-first holds a request', '30000')
    .option('--strip-billing-block', "drop Claude Code's x-anthropic-billing-header system block before forwarding")
    .addOption(flag('logDir'))
    .addOption(flag('report'))
    .addOption(flag('json'))
    .addOption(flag('modelTable'))
    .addOption(flag('maskHeader'))
    .option('--max-body-bytes <n>', 'largest request body accepted (413 past it; default 33554432, the API limit)')
    .option('--max-in-flight-bytes <n>', 'request bytes held at once over all requests (503 past it; default 256 MiB)')
    .addOption(flag('maxConnections'))
    .addOption(flag('headersTimeoutMs'))
    .addOption(flag('requestTimeoutMs'))
    .option(
      '--upstream-timeout-ms <ms>',
      'the longest the upstream may stay silent, before or during its response (504 or cut; default 600000)',
    )
    .option('--mcp', 'also serve forkcache mcp at /mcp: a fork tool that forks from the request that called it')
    .option('--mcp-config <file>', 'with --mcp: write the MCP client config (URL and bearer secret) here, mode 0600')
    .option('--mcp-workspace <dir>', "with --mcp: where the children work (default: the proxy's directory)")
    .option('--mcp-runs-dir <dir>', "with --mcp: the children's runs directory (transcripts, summaries)")
    .option(
      '--mcp-allow-bash',
      "with --mcp: children may run the client's Bash, in bubblewrap only (no network, the workspace only); exits 1 where bubblewrap does not work",
    )
    // the old name, kept for one release
    .addOption(new Option('--mcp-run-dir <dir>').hideHelp());
  addAliases(command, ALIASES);
  command.action(async (raw: Record<string, unknown>) => proxyAction(parseCommandFlags(optionsSchema, raw, ALIASES)));
}

type ProxyOptions = z.output<typeof optionsSchema>;

/** The first `--mcp-*` flag given, which needs `--mcp`. */
function mcpOnlyFlag(o: ProxyOptions): string | undefined {
  const mcpOnly = [
    o.mcpConfig && '--mcp-config',
    o.mcpWorkspace && '--mcp-workspace',
    o.mcpRunsDir && '--mcp-runs-dir',
    o.mcpRunDir && '--mcp-run-dir',
    o.mcpAllowBash && '--mcp-allow-bash',
  ];
  return mcpOnly.find((flag): flag is string => typeof flag === 'string' && flag !== '');
}

/** The command's work, from its parsed options (no process needed). */
async function proxyAction(o: ProxyOptions): Promise<void> {
  const stray = mcpOnlyFlag(o);
  if (stray && !o.mcp) {
    process.stderr.write(`${stray}: needs --mcp\n`);
    process.exitCode = 2;
    return;
  }
  const modelTable = o.modelTable === undefined ? undefined : loadCatalogue(o.modelTable);
  // Every optional package before the socket opens: found missing after it, the command
  // once printed the error and kept listening, its pool open, forever.
  await requireFeatures(o.mcp && 'mcp', o.report !== undefined && 'report');
  // the children's shell runs in bubblewrap or not at all: said before anything opens
  if (o.mcpAllowBash) (await import('../../core/tools/sandbox/sandbox.ts')).resolveSandbox('bwrap');
  const [{ startProxy }, { attachBoard }, mcpStart, report] = await Promise.all([
    import('../../integrations/proxy/server.ts'),
    import('../../integrations/proxy/report/board.ts'),
    o.mcp ? importOptional('mcp', () => import('../../integrations/mcp/start.ts')) : undefined,
    // Loaded now, not after Ctrl-C: the terminal's SIGINT reaches the whole process group, and
    // from a source checkout that includes tsx's esbuild service, which stops on it; a module
    // first imported after the signal then fails ("The service is no longer running").
    o.report === undefined
      ? undefined
      : importOptional('report', () => import('../../integrations/proxy/report/report.ts')),
  ]);
  const start = (options: Parameters<typeof startProxy>[0]) =>
    mcpStart
      ? mcpStart.startMcpProxy({
          ...options,
          ...(o.mcpWorkspace === undefined ? {} : { workspace: o.mcpWorkspace }),
          ...(o.mcpAllowBash ? { allowBash: true } : {}),
          ...(o.mcpRunsDir === undefined && o.mcpRunDir === undefined
            ? {}
            : { runsDir: (o.mcpRunsDir ?? o.mcpRunDir)! }),
        })
      : startProxy(options).then((proxy) => ({ proxy, mcp: undefined }));
  const started = await start({
    upstream: o.upstream,
    host: o.host,
    port: o.port,
    warmFirst: o.warmFirst,
    warmWaitMs: o.warmWaitMs,
    stripBillingBlock: o.stripBillingBlock,
    maskHeaders: o.maskHeader,
    ...(o.maxBodyBytes === undefined ? {} : { maxBodyBytes: o.maxBodyBytes }),
    ...(o.maxInFlightBytes === undefined ? {} : { maxInFlightBodyBytes: o.maxInFlightBytes }),
    ...(o.maxConnections === undefined ? {} : { maxConnections: o.maxConnections }),
    ...(o.headersTimeoutMs === undefined ? {} : { headersTimeoutMs: o.headersTimeoutMs }),
    ...(o.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: o.requestTimeoutMs }),
    ...(o.upstreamTimeoutMs === undefined ? {} : { upstreamTimeoutMs: o.upstreamTimeoutMs }),
    ...(o.logDir === undefined ? {} : { logDir: o.logDir }),
    ...(modelTable === undefined ? {} : { modelTable }),
  });
  const proxy = started.proxy;
  const mcp = 'mcpUrl' in started ? started : undefined;
  if (mcp && o.mcpConfig !== undefined) {
    try {
      const config = `${JSON.stringify({ mcpServers: mcp.mcpServers() }, null, 2)}\n`;
      writeFileSync(o.mcpConfig, config, { mode: 0o600 });
      chmodSync(o.mcpConfig, 0o600); // an existing file keeps its mode otherwise
    } catch (err) {
      // what is open is closed before the error ends the command: the process must exit
      await mcp.close();
      throw err;
    }
  }
  // listening before the line says so: a signal sent on reading it closes the server properly
  const stop = untilSignal();
  printOut(`forkcache proxy listening on ${proxy.url}\n`);
  if (mcp)
    // The secret is printed only where it is asked for: in the config file, never on a terminal.
    printOut(
      `forkcache mcp at ${mcp.mcpUrl}` +
        (o.mcpConfig === undefined
          ? ' (no --mcp-config: its secret is not shown)\n'
          : `; client config in ${o.mcpConfig}\n`),
    );
  const detach = attachBoard(proxy, process.stderr, o.json);
  const signal = await stop;
  printErr(`forkcache proxy: ${signal}, closing\n`);
  await (mcp ?? proxy).close();
  detach();
  const summary = proxy.summary();
  let reportFailed = false;
  if (o.report !== undefined && report !== undefined) {
    try {
      const bytes = report.writeProxyReport(o.report, summary, proxy.ledger.records());
      printErr(`report written to ${o.report} (${bytes.toLocaleString('en-US')} bytes)\n`);
    } catch (err) {
      reportFailed = true;
      printErr(`--report: could not write ${o.report}: ${(err as Error).message}\n`);
    }
  }
  if (o.json) printOut(`${JSON.stringify({ ...summary, ...(o.report === undefined ? {} : { report: o.report }) })}\n`);
  if (reportFailed) process.exitCode = 1;
}
