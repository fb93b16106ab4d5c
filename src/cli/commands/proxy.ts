import { Option, type Command } from 'commander';
import { untilSignal } from '../until-signal.ts';
import { z } from 'zod';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { HEADER_NAME } from '../../core/wire/credentials.ts';
import { intFlag, parseFlags } from '../flags.ts';
import { chmodSync, writeFileSync } from 'node:fs';
import { importOptional } from '../../core/util/optional-import.ts';
import { printOut, printErr } from '../terminal-safe.ts';
import { requireFeatures } from '../optional-features.ts';

const port = z
  .string()
  .regex(/^\d+$/, 'expected a port number')
  .transform(Number)
  .pipe(z.number().max(65535, 'at most 65535'));

const ms = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'expected milliseconds')
    .transform(Number)
    .pipe(z.number().min(1, 'at least 1').max(max, `at most ${max}`));
const bytes = z
  .string()
  .regex(/^\d+$/, 'expected a number of bytes')
  .transform(Number)
  .pipe(z.number().min(1, 'at least 1').max(Number.MAX_SAFE_INTEGER));

const optionsSchema = z.object({
  upstream: z
    .string()
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'expected an http:// or https:// URL'),
  host: z.string().min(1),
  port,
  warmFirst: z.boolean().default(false),
  warmWait: z
    .string()
    .regex(/^\d+$/, 'expected milliseconds')
    .transform(Number)
    .pipe(z.number().max(600_000, 'at most 600000 (10 minutes)')),
  stripBillingBlock: z.boolean().default(false),
  logDir: z.string().min(1, 'expected a directory').optional(),
  report: z.string().min(1, 'expected a file name').optional(),
  json: z.boolean().default(false),
  modelTable: z.string().min(1).optional(),
  maskHeader: z.array(z.string().regex(HEADER_NAME, 'expected a header name')).default([]),
  maxBodyBytes: bytes.optional(),
  maxInFlightBytes: bytes.optional(),
  maxConnections: intFlag.pipe(z.number().min(1, 'at least 1')).optional(),
  headersTimeout: ms(2_147_483_647).optional(),
  requestTimeout: ms(2_147_483_647).optional(),
  upstreamTimeout: ms(2_147_483_647).optional(),
  mcp: z.boolean().default(false),
  mcpConfig: z.string().min(1, 'expected a file name').optional(),
  mcpWorkspace: z.string().min(1, 'expected a directory').optional(),
  mcpRunsDir: z.string().min(1, 'expected a directory').optional(),
  mcpRunDir: z.string().min(1, 'expected a directory').optional(),
  mcpAllowBash: z.boolean().default(false),
});

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * Register `forkcache proxy`: an Anthropic-compatible reverse proxy with a cache ledger, until
 * SIGINT/SIGTERM; then it drains, prints the `--json` summary and writes the `--report`.
 */
export function registerProxyCommand(program: Command): void {
  program
    .command('proxy')
    .description(
      'Proxy any client to the Anthropic API (ANTHROPIC_BASE_URL=...) and show, and fix, the cache economics of its fan-outs.',
    )
    .option(
      '--upstream <url>',
      'where requests go: the real API, a gateway, or `forkcache emulator`',
      'https://api.anthropic.com',
    )
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <n>', 'TCP port; 0 picks a free one', '0')
    .option(
      '--warm-first',
      'hold siblings sharing a prefix that is still being written until its writer has begun (bounded)',
    )
    .option('--warm-wait <ms>', 'the longest --warm-first holds a request', '30000')
    .option('--strip-billing-block', "drop Claude Code's x-anthropic-billing-header system block before forwarding")
    .option('--log-dir <dir>', 'append every exchange to DIR/exchanges.jsonl (keys masked)')
    .option('--report <file>', 'write the HTML report on exit')
    .option('--json', 'print the summary as one JSON object on exit (progress as plain lines)')
    .option('--model-table <file>', 'JSON model table merged over the built-in catalogue (prices)')
    .option(
      '--mask-header <name>',
      'mask this header too wherever the proxy writes (repeatable; x-api-key, authorization, api-key, cookie, … always are)',
      collect,
    )
    .option('--max-body-bytes <n>', 'largest request body accepted (413 past it; default 33554432, the API limit)')
    .option('--max-in-flight-bytes <n>', 'request bytes held at once over all requests (503 past it; default 256 MiB)')
    .option('--max-connections <n>', 'open client connections at once (default 1024)')
    .option('--headers-timeout <ms>', 'a client must send its headers within this (default 60000)')
    .option('--request-timeout <ms>', 'a client must send its whole request within this (default 300000)')
    .option(
      '--upstream-timeout <ms>',
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
    .addOption(new Option('--mcp-run-dir <dir>').hideHelp())
    .action(async (raw: Record<string, unknown>) => {
      const o = parseFlags(optionsSchema, raw);
      const mcpOnly = [
        o.mcpConfig && '--mcp-config',
        o.mcpWorkspace && '--mcp-workspace',
        o.mcpRunsDir && '--mcp-runs-dir',
        o.mcpRunDir && '--mcp-run-dir',
        o.mcpAllowBash && '--mcp-allow-bash',
      ];
      const stray = mcpOnly.find(Boolean);
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
        warmWaitMs: o.warmWait,
        stripBillingBlock: o.stripBillingBlock,
        maskHeaders: o.maskHeader,
        ...(o.maxBodyBytes === undefined ? {} : { maxBodyBytes: o.maxBodyBytes }),
        ...(o.maxInFlightBytes === undefined ? {} : { maxInFlightBodyBytes: o.maxInFlightBytes }),
        ...(o.maxConnections === undefined ? {} : { maxConnections: o.maxConnections }),
        ...(o.headersTimeout === undefined ? {} : { headersTimeoutMs: o.headersTimeout }),
        ...(o.requestTimeout === undefined ? {} : { requestTimeoutMs: o.requestTimeout }),
        ...(o.upstreamTimeout === undefined ? {} : { upstreamTimeoutMs: o.upstreamTimeout }),
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
      if (o.json)
        printOut(`${JSON.stringify({ ...summary, ...(o.report === undefined ? {} : { report: o.report }) })}\n`);
      if (reportFailed) process.exitCode = 1;
    });
}
