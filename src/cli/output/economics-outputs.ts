import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ForkcacheError } from '../../core/util/errors.ts';
import { formatEstimate } from '../../integrations/economics/estimate-format.ts';
import type { Assumptions } from '../../integrations/economics/estimate-profile.ts';
import type { RunEstimate } from '../../integrations/economics/estimate-types.ts';
import { formatSweep, sweepCsv, type SweepRow } from '../../integrations/economics/sweep-rows.ts';
import { importOptional } from '../../core/util/optional-import.ts';
import { printOut } from '../terminal-safe.ts';

const n = (x: number): string => Math.round(x).toLocaleString('en-US');

/** `forkcache economics --whole-run`: the estimator's figures for a shape given by hand. */
export function formatWholeRun(
  e: RunEstimate,
  shape: {
    prefix: number;
    directive: number;
    children: number;
    fileTokens: number;
    kind: 'edit' | 'read';
    fresh: number;
    cached: number;
  },
  a: Assumptions,
): string {
  const counted = [
    `shared prefix ${n(shape.prefix)} tokens (${shape.cached === 0 ? 'cold' : shape.cached === shape.prefix ? 'warm: the parent cached it' : `${n(shape.cached)} cached`}), directive ${n(shape.directive)}, fresh-agent head ${n(shape.fresh)}`,
    `each child reads a file of ${n(shape.fileTokens)} tokens (--file-tokens)`,
  ];
  const assumed = [
    'cache: the first fork writes the shared prefix, the others read it; each later request reads the one before and writes its growth; entries live through the run',
    shape.kind === 'edit'
      ? `turns: read the file, edit it once${a.verifyRead > 0 ? ', read it again' : ''}, report (--read-only: read and report)`
      : 'turns: read the file, report',
    `outputs: ${a.toolCallOutput} tokens per tool call, ${a.editOutput} per edit, ${a.reportOutput} per report; results of an edit ${a.editResult}; ${a.turnOverhead} tokens of framing a turn (change any with --assume name=value)`,
  ];
  const title = `forkcache economics --whole-run: ${n(shape.children)} forks of ${e.model}, every turn priced`;
  return formatEstimate(e, { title, counted, assumed, countedLabel: 'given' });
}

/** Print a sweep as asked (table, --json or --csv) and draw it unless told not to. */
export async function writeSweep(
  rows: readonly SweepRow[],
  o: { json: boolean; csv: boolean; chart: string | false },
  log: (line: string) => void,
): Promise<void> {
  // the chart's renderer (echarts, optional) first: missing, the command fails before it prints
  const chart =
    o.chart === false
      ? undefined
      : await importOptional('report', () => import('../../integrations/report/economics-chart.ts'));
  if (o.json) printOut(`${JSON.stringify({ sweep: rows })}\n`);
  else if (o.csv) printOut(sweepCsv(rows));
  else printOut(formatSweep(rows));
  if (o.chart === false || chart === undefined) return;
  const { economicsSweepChart } = chart;
  const path = resolve(o.chart);
  try {
    writeFileSync(path, economicsSweepChart(rows));
  } catch (cause) {
    throw new ForkcacheError(
      'INTERNAL',
      `${path}: cannot write the chart (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`,
      { cause },
    );
  }
  log(`chart: ${path}`);
}
