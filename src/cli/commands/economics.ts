import type { Command } from 'commander';
import { z } from 'zod';
import { ForkcacheError } from '../../errors.ts';
import { intFlag, parseFlags } from '../flags.ts';
import {
  DEFAULT_ECONOMICS_MODEL,
  DEFAULT_FRESH_AGENT_TOKENS,
  forkEconomics,
  type EconomicsConvention,
  type EconomicsInput,
  type EconomicsResult,
} from '../../ledger/economics.ts';
import { formatEconomics } from '../../ledger/economics-format.ts';
import { loadCatalogue, type ModelCatalogue } from '../../models/catalogue.ts';
import { statusAt } from '../../models/status.ts';
import { formatComparison } from '../../ledger/economics-compare.ts';
import { CACHE_TTLS } from '../../wire/cache.ts';
import { calendarDate } from '../../models/dates.ts';
import { pricedOn } from '../../models/pricing.ts';

const optionsSchema = z.object({
  prefix: intFlag,
  directive: intFlag,
  children: intFlag.pipe(z.number().min(1, 'at least 1').max(100_000, 'at most 100,000')),
  model: z.string().min(1).default(DEFAULT_ECONOMICS_MODEL),
  ttl: z.enum(CACHE_TTLS, { error: 'expected 5m or 1h' }).default('5m'),
  warmParent: z.boolean().default(false),
  cachedPrefix: intFlag.optional(),
  freshTokens: intFlag.optional(),
  convention: z.enum(['seed', 'real', 'both'], { error: 'expected seed, real or both' }).default('real'),
  modelTable: z.string().min(1).optional(),
  compare: z.boolean().default(false),
  date: calendarDate.optional(),
  json: z.boolean().default(false),
});

/** Every model the catalogue lists as current on `date` (or today). */
function currentModels(table: ModelCatalogue, date: string | undefined): string[] {
  const at = date === undefined ? Date.now() : Date.parse(`${date}T00:00:00Z`);
  return table.models.filter((m) => pricedOn(m, at) && statusAt(m, at) === 'current').map((m) => m.id);
}

/** Register `forkcache economics`: the break-even cost of forking vs fresh agents vs no cache. */
export function registerEconomicsCommand(program: Command): void {
  program
    .command('economics')
    .description(
      'Cost of one fan-out: fork children on a cached prefix vs fresh agents vs no cache, and the break-even N.',
    )
    .option('--prefix <tokens>', 'shared prefix P (system + tools + history), tokens')
    .option('--directive <tokens>', 'per-child directive D, tokens')
    .option('--children <n>', 'number of children N')
    .option('--model <id>', `model id from the model catalogue (default ${DEFAULT_ECONOMICS_MODEL})`)
    .option('--compare', 'every current model side by side (fork vs no cache vs fresh, fork-side and all-in savings)')
    .option('--date <YYYY-MM-DD>', 'price with the rows in force on this date (default today)')
    .option('--ttl <ttl>', 'cache lifetime of the write: 5m or 1h (default 5m)')
    .option('--warm-parent', "the parent's last turn already cached the whole prefix")
    .option('--cached-prefix <tokens>', 'tokens of the prefix already cached (between cold and warm)')
    .option(
      '--fresh-tokens <tokens>',
      `fresh agent's own system prompt + tools F (default ${DEFAULT_FRESH_AGENT_TOKENS})`,
    )
    .option('--convention <c>', 'seed (no write premium), real, or both (default real)')
    .option('--model-table <file>', 'JSON model catalogue merged over the built-in one')
    .option('--json', 'print one JSON object')
    .action((raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const table = loadCatalogue(opts.modelTable);
      if (opts.cachedPrefix !== undefined && opts.cachedPrefix > opts.prefix) {
        throw new ForkcacheError(
          'INVALID_ARGUMENT',
          `--cached-prefix: ${opts.cachedPrefix} exceeds --prefix (${opts.prefix})`,
        );
      }
      if (opts.cachedPrefix !== undefined && opts.warmParent && opts.cachedPrefix !== opts.prefix) {
        throw new ForkcacheError(
          'INVALID_ARGUMENT',
          '--cached-prefix: contradicts --warm-parent (a warm parent has cached the whole prefix)',
        );
      }
      const conventions: EconomicsConvention[] = opts.convention === 'both' ? ['seed', 'real'] : [opts.convention];
      const resultFor = (model: string, convention: EconomicsConvention): EconomicsResult => {
        const input: EconomicsInput = {
          prefixTokens: opts.prefix,
          directiveTokens: opts.directive,
          children: opts.children,
          model,
          ttl: opts.ttl,
          warmParent: opts.warmParent,
          convention,
          table,
        };
        // exactOptionalPropertyTypes: absent flags stay absent, the library applies defaults.
        if (opts.freshTokens !== undefined) input.freshTokens = opts.freshTokens;
        if (opts.cachedPrefix !== undefined) input.cachedPrefixTokens = opts.cachedPrefix;
        if (opts.date !== undefined) input.date = opts.date;
        return forkEconomics(input, '--model', '--date');
      };
      if (opts.compare) {
        const rows = currentModels(table, opts.date).map((model) =>
          resultFor(model, conventions[conventions.length - 1] ?? 'real'),
        );
        process.stdout.write(opts.json ? `${JSON.stringify({ compare: rows })}\n` : formatComparison(rows));
        return;
      }
      const results = conventions.map((convention) => resultFor(opts.model, convention));
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(Object.fromEntries(results.map((r) => [r.convention, r])))}\n`);
      } else {
        process.stdout.write(formatEconomics(results));
      }
    });
}
