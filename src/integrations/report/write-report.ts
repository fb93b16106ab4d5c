import type { ModelCatalogue } from '../../core/models/catalogue.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ForkcacheError } from '../../core/util/errors.ts';
import { readBenchResults, renderBenchReport } from './bench-report.ts';
import { locateRuns } from './locate.ts';
import { readReportFiles } from './run-files.ts';
import { buildRunModel } from './run-model.ts';
import { renderRunReport } from './run-report.ts';

export interface WrittenReport {
  out: string;
  bytes: number;
  /** What was rendered, in one sentence. */
  scope: string;
  /** Fan-out ids rendered (empty for a bench report). */
  fanouts: string[];
  /** Run directories found under RUN_DIR. */
  found: number;
  /** Inline SVG charts in the page. */
  charts: number;
}

function write(out: string, html: string): number {
  try {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, html);
  } catch (cause) {
    // Not bad input: the report was built, the disk refused it (exit code 1).
    throw new ForkcacheError(
      'INTERNAL',
      `${out}: cannot write the report (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message})`,
      { cause },
    );
  }
  return Buffer.byteLength(html);
}

const countCharts = (html: string): number => html.match(/<figure class="chart"/g)?.length ?? 0;

/**
 * Render the HTML report of a run directory (one fan-out, or the latest / all of a runs
 * directory) to `out` (default: `report.html` inside RUN_DIR).
 */
export function writeRunReport(
  runDir: string,
  options: { out?: string | undefined; all?: boolean; catalogue?: ModelCatalogue | undefined } = {},
): WrittenReport {
  const located = locateRuns(runDir, { all: options.all ?? false });
  const models = located.dirs.map((dir) => buildRunModel(readReportFiles(dir), options.catalogue));
  const html = renderRunReport(models, located.scope);
  const out = options.out ?? join(runDir, 'report.html');
  return {
    out,
    bytes: write(out, html),
    scope: located.scope,
    fanouts: models.map((m) => m.id),
    found: located.found,
    charts: countCharts(html),
  };
}

/** Render `npm run bench` results (latest.json) to `out` (default: beside it, `.html`). */
export function writeBenchReport(path: string, options: { out?: string | undefined } = {}): WrittenReport {
  const html = renderBenchReport(readBenchResults(path), path);
  const out = options.out ?? path.replace(/\.json$/i, '') + '.html';
  return {
    out,
    bytes: write(out, html),
    scope: `benchmark results ${path}`,
    fanouts: [],
    found: 0,
    charts: countCharts(html),
  };
}
