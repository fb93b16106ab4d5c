import { loadCatalogue, type ModelCatalogue } from '../../core/models/catalogue.ts';
import type { Command } from 'commander';
import { z } from 'zod';
import { ForkcacheError } from '../../core/util/errors.ts';
import { importOptional } from '../../core/util/optional-import.ts';
import type { WrittenReport } from '../../integrations/report/write-report.ts';
import { parseFlags } from '../flags.ts';
import { flag, FLAGS } from '../flag-table.ts';
import { printOut, printErr } from '../terminal-safe.ts';

const optionsSchema = z.object({
  out: FLAGS.out.schema,
  bench: z.string().min(1, 'expected a results file').optional(),
  all: z.boolean().default(false),
  json: FLAGS.json.schema,
  modelTable: FLAGS.modelTable.schema,
});

/** Print where the report went: a sentence on stderr, the path (or one JSON object) on stdout. */
function announceReport(written: WrittenReport, json: boolean): void {
  printErr(`report: ${written.scope}\n`);
  if (json)
    printOut(
      `${JSON.stringify({ report: written.out, bytes: written.bytes, scope: written.scope, fanouts: written.fanouts, found: written.found, charts: written.charts })}\n`,
    );
  else
    printOut(
      `report written to ${written.out} (${written.charts} charts, ${written.bytes.toLocaleString('en-US')} bytes)\n`,
    );
}

/**
 * The report writer, loaded on first use: it renders with echarts, an optional peer dependency
 * that `forkcache --version` and every other command must not load.
 */
const loadReportWriter = (): Promise<typeof import('../../integrations/report/write-report.ts')> =>
  importOptional('report', () => import('../../integrations/report/write-report.ts'));

/**
 * Write the report of a run that just finished. A failure here must not hide the run's own
 * result: it is logged, and the caller turns it into exit code 1.
 */
export async function reportAfterRun(
  runDir: string | undefined,
  flag: boolean | string | undefined,
  log: (line: string) => void,
  catalogue?: ModelCatalogue,
): Promise<{ path?: string; failed: boolean }> {
  if (flag === undefined || flag === false) return { failed: false };
  try {
    if (!runDir) throw new ForkcacheError('REPORT_FILE_MISSING', 'the run wrote no run directory');
    const { writeRunReport } = await loadReportWriter();
    const written = writeRunReport(runDir, { out: typeof flag === 'string' ? flag : undefined, catalogue });
    log(`report written to ${written.out} (${written.charts} charts)`);
    return { path: written.out, failed: false };
  } catch (err) {
    log(`report: ${(err as Error).message}`);
    return { failed: true };
  }
}

/** Register `forkcache report RUN_DIR` and `forkcache report --bench FILE`. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description(
      'write one self-contained HTML report (SVG charts, no network needed) of a run directory, or of benchmark results',
    )
    .argument(
      '[run-dir]',
      'a run directory (with manifest.json), or a runs directory holding several (the latest is rendered)',
    )
    .addOption(flag('out'))
    .option('--all', 'render every fan-out of a runs directory, oldest first, instead of the latest')
    .option('--bench <file>', 'render `npm run bench` results (bench/results/latest.json) instead of a run')
    .addOption(flag('modelTable'))
    .addOption(flag('json'))
    .action(async (runDir: string | undefined, raw: Record<string, unknown>) => {
      const opts = parseFlags(optionsSchema, raw);
      if (opts.bench !== undefined && runDir !== undefined) {
        throw new ForkcacheError('CLI_USAGE', 'report: give RUN_DIR or --bench FILE, not both');
      }
      if (opts.bench === undefined && runDir === undefined) {
        throw new ForkcacheError('CLI_USAGE', 'report: missing RUN_DIR (a fan-out or runs directory), or --bench FILE');
      }
      const { writeBenchReport, writeRunReport } = await loadReportWriter();
      const written =
        opts.bench !== undefined
          ? writeBenchReport(opts.bench, { out: opts.out })
          : writeRunReport(runDir!, { out: opts.out, all: opts.all, catalogue: loadCatalogue(opts.modelTable) });
      announceReport(written, opts.json);
    });
}
