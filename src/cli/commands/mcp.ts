import type { Command } from 'commander';
import { z } from 'zod';
import { readJsonFile } from '../../core/util/json-file.ts';
import { importOptional } from '../../core/util/optional-import.ts';
import { parseFlags } from '../flags.ts';
import { parseOrThrow } from '../../core/util/validation.ts';

const optionsSchema = z.object({ config: z.string().min(1, 'expected a file name') });

const configSchema = z.object({
  mcpServers: z
    .record(
      z.string(),
      z.object({ url: z.url(), headers: z.object({ Authorization: z.string().regex(/^Bearer \S+$/) }) }),
    )
    .refine((servers) => Object.keys(servers).length > 0, 'expected one server'),
});

/**
 * Register `forkcache mcp`: the fork tools over stdio, for MCP clients that start their servers
 * as processes. The fan-out itself runs in `forkcache proxy --mcp` (only the proxy has seen the
 * request to fork from); this bridge reaches it with the URL and secret of the config file
 * the proxy wrote (`--mcp-config`), so the secret never appears on a command line.
 */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      'Serve the fork tool over stdio for an MCP client, through a running `forkcache proxy --mcp` (docs/mcp.md).',
    )
    .requiredOption('--config <file>', 'the MCP config that `forkcache proxy --mcp --mcp-config FILE` wrote')
    .action(async (raw: Record<string, unknown>) => {
      const o = parseFlags(optionsSchema, raw);
      const config = parseOrThrow(
        configSchema,
        readJsonFile(o.config, '--config', 'INVALID_FLAG'),
        'INVALID_FLAG',
        `--config ${o.config}`,
      );
      const [server] = Object.values(config.mcpServers);
      const { serveStdioBridge } = await importOptional('mcp', () => import('../../integrations/mcp/stdio.ts'));
      await serveStdioBridge(server!.url, server!.headers.Authorization.slice('Bearer '.length));
    });
}
