import type { Command } from 'commander';
import { z } from 'zod';
import { ForkcacheError } from '../../errors.ts';
import { intFlag, parseFlags } from '../flags.ts';
import { DEFAULT_ECONOMICS_MODEL, DEFAULT_FRESH_AGENT_TOKENS, forkEconomics, type EconomicsConvention, type EconomicsInput, type EconomicsResult } from '../../ledger/economics.ts';
import { formatEconomics } from '../../ledger/economics-format.ts';
import { DEFAULT_MODEL_TABLE, loadModelTable, requireModel } from '../../ledger/models.ts';

const optionsSchema = z.object({
  prefix: intFlag,
  directive: intFlag,
  children: intFlag.pipe(z.number().min(1, 'at least 1').max(100_000, 'at most 100,000')),
  model: z.string().min(1).default(DEFAULT_ECONOMICS_MODEL),
  ttl: z.enum(['5m', '1h'], { error: 'expected 5m or 1h' }).default('5m'),
  warmParent: z.boolean().default(false),
  cachedPrefix: intFlag.optional(),
  freshTokens: intFlag.optional(),
  convention: z.enum(['seed', 'real', 'both'], { error: 'expected seed, real or both' }).default('real'),
  modelTable: z.string().min(1).optional(),
  json: z.boolean().default(false),
});

/** Register `forkcache economics`: the break-even cost of forking vs fresh agents vs no cache. */
export function registerEconomicsCommand(program: Command): void {
  program
    .command('economics')
    .description('Cost of one fan-out: fork children on a cached prefix vs fresh agents vs no cache, and the break-even N.')
    .option('--prefix <tokens>', 'shared prefix P (system + tools + history), tokens')
    .option('--directive <tokens>', 'per-child directive D, tokens')
    .option('--children <n>', 'number of children N')
    .option('--model <id>', `model id from the price table (default ${DEFAULT_ECONOMICS_MODEL})`)
    .option('--ttl <ttl>', 'cache lifetime of the write: 5m or 1h (default 5m)')
    .option('--warm-parent', "the parent's last turn already cached the whole prefix")
    .option('--cached-prefix <tokens>', 'tokens of the prefix already cached (between cold and warm)')
    .option('--fresh-tokens <tokens>', `fresh agent's own system prompt + tools F (default ${DEFAULT_FRESH_AGENT_TOKENS})`)
    .option('--convention <c>', 'seed (no write premium), real, or both (default real)')
    .option('--model-table <file>', 'JSON price table merged over the built-in one')
    .option('--json', 'print one JSON object')
    .action((raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      const table = opts.modelTable === undefined ? DEFAULT_MODEL_TABLE : loadModelTable(opts.modelTable);
      requireModel(opts.model, table, '--model');
      if (opts.cachedPrefix !== undefined && opts.cachedPrefix > opts.prefix) {
        throw new ForkcacheError('INVALID_ARGUMENT', `--cached-prefix: ${opts.cachedPrefix} exceeds --prefix (${opts.prefix})`);
      }
      if (opts.cachedPrefix !== undefined && opts.warmParent && opts.cachedPrefix !== opts.prefix) {
        throw new ForkcacheError('INVALID_ARGUMENT', '--cached-prefix: contradicts --warm-parent (a warm parent has cached the whole prefix)');
      }
      const conventions: EconomicsConvention[] = opts.convention === 'both' ? ['seed', 'real'] : [opts.convention];
      const results: EconomicsResult[] = conventions.map((convention) => {
        const input: EconomicsInput = {
          prefixTokens: opts.prefix,
          directiveTokens: opts.directive,
          children: opts.children,
          model: opts.model,
          ttl: opts.ttl,
          warmParent: opts.warmParent,
          convention,
          table,
        };
        // exactOptionalPropertyTypes: absent flags stay absent, the library applies defaults.
        if (opts.freshTokens !== undefined) input.freshTokens = opts.freshTokens;
        if (opts.cachedPrefix !== undefined) input.cachedPrefixTokens = opts.cachedPrefix;
        return forkEconomics(input);
      });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(Object.fromEntries(results.map((r) => [r.convention, r])))}\n`);
      } else {
        process.stdout.write(formatEconomics(results));
      }
    });
}
