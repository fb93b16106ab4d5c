import type { Command } from 'commander';
import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { loadCatalogue } from '../../core/models/catalogue.ts';
import { createAnthropicClient } from '../../providers/anthropic/client.ts';
import { addAliases, flag, type FlagAliases, flagSchema, parseCommandFlags } from '../flag-table.ts';
import { formatApi, formatModels } from '../models/table.ts';
import { apiView, catalogueView, type ApiView, type ListedModel } from '../models/view.ts';
import { printOut } from '../terminal-safe.ts';

/**
 * Old spellings, hidden: `--api` is where `run` sends requests, `--all` is every fan-out of
 * `report`; here they were the endpoint whose list to show and the retired models.
 */
const ALIASES: FlagAliases = { '--api <endpoint>': 'fromApi', '--all': 'retired' };

const optionsSchema = flagSchema(['modelTable', 'json', 'date']).extend({
  retired: z.boolean().default(false),
  fromApi: z.enum(['anthropic'], { error: 'expected anthropic (the endpoint whose model list to show)' }).optional(),
});

/** Every model `GET /v1/models` lists for the key, all pages. */
async function listEndpointModels(): Promise<{ baseURL: string; models: ListedModel[] }> {
  const apiKey = process.env['ANTHROPIC_API_KEY'];
  if (!apiKey)
    throw new ForkcacheError(
      'INVALID_FLAG',
      '--from-api anthropic: ANTHROPIC_API_KEY is not set (the endpoint lists the models of a key)',
    );
  // No baseURL: the SDK takes ANTHROPIC_BASE_URL, or the real API, as every other command does.
  // listing bills nothing: the SDK may retry it (its default of 2)
  const client = createAnthropicClient({ apiKey, timeoutMs: 60_000, maxRetries: 2 });
  const models: ListedModel[] = [];
  try {
    for await (const m of client.models.list({ limit: 1000 }))
      models.push({ id: m.id, display_name: m.display_name, lifecycle: m.lifecycle });
  } catch (cause) {
    throw new ForkcacheError('API_ERROR', `GET ${client.baseURL}/v1/models failed: ${(cause as Error).message}`, {
      cause,
    });
  }
  return { baseURL: client.baseURL, models };
}

/** Register `forkcache models`: the model catalogue (status, prices, cache rules) as a table. */
export function registerModelsCommand(program: Command): void {
  const command = program
    .command('models')
    .description('The model catalogue: status, prices, read multiplier, minimum cacheable length, context window.')
    .addOption(flag('modelTable'))
    .option('--retired', 'include retired models')
    .addOption(flag('date'))
    .option(
      '--from-api <endpoint>',
      'also list what GET /v1/models returns: anthropic (needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL is honoured)',
    )
    .addOption(flag('json'));
  addAliases(command, ALIASES);
  command.action(async (raw: Record<string, unknown>) => {
    const opts = parseCommandFlags(optionsSchema, raw, ALIASES);
    const catalogue = loadCatalogue(opts.modelTable);
    const at = opts.date === undefined ? Date.now() : Date.parse(`${opts.date}T00:00:00Z`);
    const view = catalogueView(catalogue, at, opts.retired);
    let api: ApiView | undefined;
    if (opts.fromApi === 'anthropic') {
      const listed = await listEndpointModels();
      api = apiView(listed.baseURL, listed.models, catalogue, at);
    }
    if (opts.json) {
      const json = { date: view.date, as_of: view.as_of, models: view.models, ...(api ? { api } : {}) };
      printOut(`${JSON.stringify(json)}\n`);
      return;
    }
    const source = opts.modelTable === undefined ? 'built in' : `built in, with ${opts.modelTable} merged over it`;
    printOut(formatModels(view, source) + (api ? `\n${formatApi(api)}` : ''));
  });
}
