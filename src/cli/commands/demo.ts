import type { Command } from 'commander';
import { z } from 'zod';
import { WARM_STRATEGIES, type WarmStrategy } from '../../core/settings/engine-settings.ts';
import { DEMO_MODEL, demoModelOf, runDemo } from '../demo/run-demo.ts';
import type { ProviderId } from '../../core/wire/providers.ts';
import { PROVIDERS } from '../../providers/registry.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { cancelOnInterrupt, INTERRUPTED_EXIT_CODE, interruptedLine } from '../interrupt.ts';
import type { ProgressBoard } from '../board/progress-board.ts';
import { forkRowsInSummary } from '../board/summary-rows.ts';
import { parentLine, settleWorkspace, someFiles } from '../demo/demo-end.ts';
import { DEMO_NEW_NAME, DEMO_OLD_NAME } from '../demo/workspace.ts';
import { intFlag, parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { editsNotApplied, formatFanOutResult, jsonSummary } from '../output/summary-table.ts';
import { modelCheck } from '../models/model-check.ts';
import { reportAfterRun } from './report.ts';
import { printOut, printErr } from '../terminal-safe.ts';
import { requireFeatures } from '../optional-features.ts';

const optionsSchema = z.object({
  forks: intFlag.pipe(z.number().min(1, 'at least 1').max(1000, 'at most 1,000')).default(8),
  warm: z
    .enum(WARM_STRATEGIES as [WarmStrategy, ...WarmStrategy[]], {
      error: `expected one of ${WARM_STRATEGIES.join(', ')}`,
    })
    .default('first-child'),
  latency: FLAGS.latency.schema,
  seed: FLAGS.seed.schema.unwrap().default(0),
  json: FLAGS.json.schema,
  report: FLAGS.report.schema,
  model: FLAGS.model.schema,
  provider: FLAGS.provider.schema.unwrap().default('anthropic'),
  modelTable: FLAGS.modelTable.schema,
  parentFromClaudeTranscript: FLAGS.parentFromClaudeTranscript.schema,
  keepWorkspace: z.boolean().default(false),
  baseUrl: z.url('expected a URL such as http://127.0.0.1:8080/v1').optional(),
  maxTokens: intFlag.pipe(z.number().min(1, 'at least 1')).optional(),
});

/**
 * Where a local engine's forks go: `--base-url`, else `OPENAI_BASE_URL`; without either the demo
 * says plainly that it runs on the emulator. `--base-url` on any other provider is bad input.
 */
function localEngineURL(
  provider: ProviderId,
  flag: string | undefined,
  log: (line: string) => void,
): string | undefined {
  if (!PROVIDERS[provider].local) {
    if (flag !== undefined)
      throw new ForkcacheError('INVALID_FLAG', '--base-url: only with --provider llama-cpp or openai-compatible', {
        data: { field: 'baseUrl' },
      });
    return undefined;
  }
  const url = flag ?? (process.env['OPENAI_BASE_URL'] || undefined);
  if (url === undefined)
    log(
      `note: no --base-url and no OPENAI_BASE_URL: the demo runs on the embedded emulator, whose OpenAI mode stands in for a ${provider} server${provider === 'llama-cpp' ? ' (it has no slots)' : ''}`,
    );
  return url;
}

/** Register `forkcache demo`: the main job, end to end on the embedded emulator. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      `fork N children that rename ${DEMO_OLD_NAME} to ${DEMO_NEW_NAME} in a copy of a sample repository, on the local emulator (no API key)`,
    )
    .option('--forks <n>', 'number of forks (one per file)', '8')
    .option('--warm <strategy>', `warm-up strategy: ${WARM_STRATEGIES.join(' | ')}`, 'first-child')
    .addOption(flag('latency', 'fast'))
    .addOption(flag('seed', '0'))
    .addOption(flag('model'))
    .addOption(flag('provider', 'anthropic'))
    .addOption(flag('modelTable'))
    .option('--max-tokens <n>', "each fork turn's output limit (a local model that never stops on its own)")
    .option(
      '--base-url <url>',
      'with --provider llama-cpp or openai-compatible: run the forks on that server (default OPENAI_BASE_URL; without either, the emulator)',
    )
    .addOption(flag('json'))
    .option(
      '--keep-workspace',
      'keep the temporary copy of the sample repository after a successful run (a failed or interrupted one is always kept)',
    )
    .addOption(flag('report'))
    .addOption(flag('parentFromClaudeTranscript'))
    .action(async (raw: Record<string, unknown>) => {
      const flags = parseFlags(optionsSchema, raw);
      await requireFeatures(flags.report !== undefined && flags.report !== false && 'report');
      const opts = { ...flags, model: flags.model ?? demoModelOf(flags.provider) };
      const log = (line: string): void => void printErr(`${line}\n`);
      if (opts.parentFromClaudeTranscript !== undefined) {
        if (opts.provider !== 'anthropic')
          throw new ForkcacheError(
            'INVALID_FLAG',
            '--provider: the transcript demo runs on the anthropic emulator only',
            { data: { field: 'provider' } },
          );
        const { runTranscriptDemo } = await import('../demo/transcript-demo.ts');
        const model = raw['model'] === undefined ? undefined : opts.model;
        const demo = await runTranscriptDemo({
          transcript: opts.parentFromClaudeTranscript,
          model,
          forks: opts.forks,
          warm: opts.warm,
          latency: opts.latency,
          seed: opts.seed,
          plain: opts.json,
          log,
          catalogue: modelCheck(model ?? DEMO_MODEL, opts.modelTable, () => {}),
        });
        if (opts.json) printOut(`${JSON.stringify(jsonSummary(demo.result, { workspace: demo.workspace }))}\n`);
        else printOut(`\n${formatFanOutResult(demo.result, demo.model)}\n`);
        process.exitCode = demo.result.forks.every((f) => f.status === 'completed') ? 0 : 1;
        return;
      }
      const catalogue = modelCheck(opts.model, opts.modelTable, log, Date.now(), opts.provider);
      const forksBaseURL = localEngineURL(opts.provider, opts.baseUrl, log);
      let engine: { destroy(): Promise<void> } | undefined;
      let board: ProgressBoard | undefined;
      const say = (line: string): void => (board ? board.log(line) : log(line));
      const interrupt = cancelOnInterrupt(say, { stop: async () => engine?.destroy() });
      const demo = await runDemo({
        model: opts.model,
        provider: opts.provider,
        forksBaseURL,
        maxTokens: opts.maxTokens,
        catalogue,
        forks: opts.forks,
        warm: opts.warm,
        latency: opts.latency,
        seed: opts.seed,
        plain: opts.json,
        log,
        watch: (fan) => interrupt.watch(fan),
        onEngine: (e) => (engine = e),
        onBoard: (b) => (board = b),
        signal: interrupt.signal,
      }).finally(() => interrupt.dispose());
      const failed =
        demo.result.forks.filter((f) => f.status !== 'completed').length + editsNotApplied(demo.result).length;
      const report = await reportAfterRun(demo.result.summary.run_dir, opts.report, log, catalogue);
      const ok = !interrupt.interrupted && failed === 0 && demo.leftovers.length === 0 && !report.failed;
      const workspace = settleWorkspace(demo.workspace, { ok, keep: opts.keepWorkspace, report: report.path });
      if (opts.json) {
        printOut(
          `${JSON.stringify(jsonSummary(demo.result, { workspace: demo.workspace, workspace_kept: workspace.kept, leftovers: demo.leftovers, ...(interrupt.interrupted ? { interrupted: true } : {}), ...(report.path ? { report: report.path } : {}) }))}\n`,
        );
      } else {
        const rows = forkRowsInSummary(opts.json);
        printOut(`\n${formatFanOutResult(demo.result, opts.model, catalogue, { forkRows: rows })}\n\n`);
        printOut(`parent: ${parentLine(demo)}\n`);
        printOut(`${DEMO_OLD_NAME} left under src/: ${someFiles(demo.leftovers)}\n`);
        printOut(`${workspace.line}\n`);
      }
      const hint = interrupt.interrupted ? interruptedLine(demo.result) : undefined;
      if (hint) log(hint);
      process.exitCode = interrupt.interrupted ? INTERRUPTED_EXIT_CODE : ok ? 0 : 1;
    });
}
