import type { Command } from 'commander';
import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { intFlag } from '../flags.ts';
import { addAliases, flag, type FlagAliases, FLAGS, parseCommandFlags } from '../flag-table.ts';
import {
  DEFAULT_ECONOMICS_MODEL,
  DEFAULT_FRESH_AGENT_TOKENS,
  forkEconomics,
} from '../../integrations/economics/economics.ts';
import type { EconomicsConvention, EconomicsInput, EconomicsResult } from '../../integrations/economics/types.ts';
import { formatEconomics } from '../../integrations/economics/format.ts';
import { DEFAULT_FILE_TOKENS, wholeRunEconomics } from '../../integrations/economics/run.ts';
import { parseSweep } from '../../integrations/economics/sweep.ts';
import { sweepRows } from '../../integrations/economics/sweep-rows.ts';
import { parseAssumptions } from '../../integrations/economics/estimate-profile.ts';
import { DEFAULT_MAX_TOKENS } from '../../core/loop/run-fork.ts';
import { loadCatalogue, type ModelCatalogue } from '../../core/models/catalogue.ts';
import { statusAt } from '../../core/models/status.ts';
import { formatComparison } from '../../integrations/economics/compare.ts';
import { CACHE_TTLS, RESPONSES_CACHE_TTLS } from '../../core/wire/cache.ts';
import { dayStart } from '../../core/models/dates.ts';
import { pricedOn } from '../../core/models/pricing.ts';
import { formatWholeRun, writeSweep } from '../output/economics-outputs.ts';
import { printOut, printErr } from '../terminal-safe.ts';

/** The directive size when none is given: the reference chapter's 200 tokens. */
const DEFAULT_DIRECTIVE = 200;
const DEFAULT_CHART = 'forkcache-economics.svg';
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** The old spelling, hidden: `--directive` is `plan`'s directive template; here it was a size in tokens. */
const ALIASES: FlagAliases = { '--directive <tokens>': 'directiveTokens' };

const optionsSchema = z.object({
  prefix: intFlag.optional(),
  directiveTokens: intFlag.default(DEFAULT_DIRECTIVE),
  children: intFlag.pipe(z.number().min(1, 'at least 1').max(100_000, 'at most 100,000')).optional(),
  model: FLAGS.model.schema.unwrap().default(DEFAULT_ECONOMICS_MODEL),
  ttl: z.enum([...CACHE_TTLS, ...RESPONSES_CACHE_TTLS], { error: 'expected 5m, 1h, 30m or 12h' }).default('5m'),
  warmParent: z.boolean().default(false),
  cachedPrefix: intFlag.optional(),
  freshTokens: intFlag.optional(),
  convention: z.enum(['seed', 'real', 'both'], { error: 'expected seed, real or both' }).default('real'),
  modelTable: FLAGS.modelTable.schema,
  compare: z.boolean().default(false),
  date: FLAGS.date.schema,
  json: FLAGS.json.schema,
  wholeRun: z.boolean().default(false),
  fileTokens: intFlag.default(DEFAULT_FILE_TOKENS),
  readOnly: z.boolean().default(false),
  assume: FLAGS.assume.schema,
  sweep: z.array(z.string()).default([]),
  csv: z.boolean().default(false),
  chart: z.union([z.string().min(1), z.literal(false)]).default(DEFAULT_CHART),
});
type Options = z.output<typeof optionsSchema>;

function invalid(message: string, field: string): ForkcacheError {
  return new ForkcacheError('INVALID_FLAG', message, { data: { field } });
}

/** Every model the catalogue lists as current on `date` (or today). */
function currentModels(table: ModelCatalogue, date: string | undefined): string[] {
  const at = date === undefined ? Date.now() : dayStart(date);
  return table.models.filter((m) => pricedOn(m, at) && statusAt(m, at) === 'current').map((m) => m.id);
}

function checkShape(opts: Options, swept: ReadonlySet<string>): void {
  if (opts.prefix === undefined && !swept.has('prefix'))
    throw invalid('--prefix: required (or --sweep prefix=…)', '--prefix');
  if (opts.children === undefined && !swept.has('forks'))
    throw invalid('--children: required (or --sweep forks=…)', '--children');
  if (opts.cachedPrefix !== undefined && opts.prefix !== undefined && opts.cachedPrefix > opts.prefix)
    throw invalid(`--cached-prefix: ${opts.cachedPrefix} exceeds --prefix (${opts.prefix})`, '--cached-prefix');
  if (opts.cachedPrefix !== undefined && opts.warmParent && opts.cachedPrefix !== opts.prefix)
    throw invalid(
      '--cached-prefix: contradicts --warm-parent (a warm parent has cached the whole prefix)',
      '--cached-prefix',
    );
  if (opts.csv && opts.json) throw invalid('--csv: give --csv or --json, not both', '--csv');
  if (opts.csv && opts.sweep.length === 0) throw invalid('--csv: only with --sweep (one row per point)', '--csv');
}

/** Register `forkcache economics`: what a fan-out costs as forks, as fresh agents and without a cache. */
export function registerEconomicsCommand(program: Command): void {
  const command = program
    .command('economics')
    .description(
      'What a fan-out costs: fork children on a cached prefix vs fresh agents vs no cache. By default the first request of each child only; --whole-run prices every turn.',
    )
    .option('--prefix <tokens>', 'shared prefix P (system + tools + history), tokens')
    .option('--directive-tokens <tokens>', `per-child directive D, tokens (default ${DEFAULT_DIRECTIVE})`)
    .option('--children <n>', 'number of children N')
    .addOption(flag('model', DEFAULT_ECONOMICS_MODEL))
    .option(
      '--whole-run',
      'price every turn of every child (the estimator of run --dry-run), not only its first request',
    )
    .option(
      '--file-tokens <tokens>',
      `with --whole-run: tokens of the file each child reads (default ${DEFAULT_FILE_TOKENS})`,
    )
    .option('--read-only', 'with --whole-run: children read and report (default: read, edit, re-read, report)')
    .addOption(flag('assume'))
    .option(
      '--sweep <name=values>',
      'a grid of shapes: forks, prefix, directive, file-tokens, fresh-tokens or model = a,b,c or a..b (doubling); e.g. --sweep forks=1..64 --sweep prefix=10K,100K',
      collect,
    )
    .option('--csv', 'with --sweep: the rows as CSV')
    .option('--chart <file>', `with --sweep: the SVG chart's path (default ${DEFAULT_CHART})`)
    .option('--no-chart', 'with --sweep: draw no chart')
    .option('--compare', 'every current model side by side (fork vs no cache vs fresh, fork-side and all-in savings)')
    .addOption(flag('date'))
    .option(
      '--ttl <ttl>',
      "cache lifetime of the write: 5m or 1h (default 5m); 30m or 12h, OpenAI's Responses API (OpenAI models)",
    )
    .option('--warm-parent', "the parent's last turn already cached the whole prefix")
    .option('--cached-prefix <tokens>', 'tokens of the prefix already cached (between cold and warm)')
    .option(
      '--fresh-tokens <tokens>',
      `fresh agent's own system prompt + tools F (default ${DEFAULT_FRESH_AGENT_TOKENS})`,
    )
    .option('--convention <c>', 'seed (no write premium), real, or both (default real)')
    .addOption(flag('modelTable'))
    .addOption(flag('json'));
  addAliases(command, ALIASES);
  command.action(async (raw: Record<string, unknown>) =>
    economicsAction(parseCommandFlags(optionsSchema, raw, ALIASES)),
  );
}

type EconomicsOptions = z.output<typeof optionsSchema>;

/** The command's work, from its parsed options (no process needed). */
async function economicsAction(opts: EconomicsOptions): Promise<void> {
  const sweep = parseSweep(opts.sweep);
  checkShape(opts, new Set(Object.keys(sweep)));
  const table = loadCatalogue(opts.modelTable);
  const { assumptions, error } = parseAssumptions(opts.assume);
  if (error) throw invalid(`--assume: ${error}`, '--assume');
  const fresh = opts.freshTokens ?? DEFAULT_FRESH_AGENT_TOKENS;
  if (opts.sweep.length > 0) {
    const base = {
      model: opts.model,
      prefix: opts.prefix ?? 0,
      forks: opts.children ?? 1,
      directive: opts.directiveTokens,
      'file-tokens': opts.fileTokens,
      'fresh-tokens': fresh,
    };
    const rows = sweepRows(base, sweep, {
      table,
      date: opts.date,
      wholeRun: opts.wholeRun,
      kind: opts.readOnly ? 'read' : 'edit',
      assumptions,
      warmParent: opts.warmParent,
      ttl: opts.ttl,
      maxTokens: DEFAULT_MAX_TOKENS,
    });
    await writeSweep(rows, { json: opts.json, csv: opts.csv, chart: opts.chart }, (l) => printErr(`${l}\n`));
    return;
  }
  const prefix = opts.prefix!;
  const children = opts.children!;
  if (opts.wholeRun) {
    const cached = opts.warmParent ? prefix : (opts.cachedPrefix ?? 0);
    const kind = opts.readOnly ? ('read' as const) : ('edit' as const);
    const estimate = wholeRunEconomics({
      prefixTokens: prefix,
      directiveTokens: opts.directiveTokens,
      children,
      model: opts.model,
      table,
      date: opts.date,
      freshTokens: fresh,
      fileTokens: opts.fileTokens,
      kind,
      cachedPrefixTokens: cached,
      assumptions,
      maxTokens: DEFAULT_MAX_TOKENS,
    });
    const shape = {
      prefix,
      directive: opts.directiveTokens,
      children,
      fileTokens: opts.fileTokens,
      kind,
      fresh,
      cached,
    };
    printOut(
      opts.json
        ? `${JSON.stringify({ whole_run: estimate, assumptions })}\n`
        : formatWholeRun(estimate, shape, assumptions),
    );
    return;
  }
  const conventions: EconomicsConvention[] = opts.convention === 'both' ? ['seed', 'real'] : [opts.convention];
  const resultFor = (model: string, convention: EconomicsConvention): EconomicsResult => {
    const input: EconomicsInput = {
      prefixTokens: prefix,
      directiveTokens: opts.directiveTokens,
      children,
      model,
      ttl: opts.ttl,
      warmParent: opts.warmParent,
      convention,
      table,
      freshTokens: fresh,
    };
    // exactOptionalPropertyTypes: absent flags stay absent, the library applies defaults.
    if (opts.cachedPrefix !== undefined) input.cachedPrefixTokens = opts.cachedPrefix;
    if (opts.date !== undefined) input.date = opts.date;
    return forkEconomics(input, '--model', '--date', '--ttl');
  };
  if (opts.compare) {
    const rows = currentModels(table, opts.date).map((model) =>
      resultFor(model, conventions[conventions.length - 1] ?? 'real'),
    );
    printOut(opts.json ? `${JSON.stringify({ compare: rows })}\n` : formatComparison(rows));
    return;
  }
  const results = conventions.map((convention) => resultFor(opts.model, convention));
  if (opts.json) {
    printOut(`${JSON.stringify(Object.fromEntries(results.map((r) => [r.convention, r])))}\n`);
  } else {
    printOut(formatEconomics(results));
  }
}
