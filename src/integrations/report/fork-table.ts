import type { ForkReport } from '../../core/fork/report.ts';
import { reportSaysNotDone } from '../../core/fork/report-outcome.ts';
import { escapeHtml, type Html, raw, table } from './html.ts';
import type { ForkRow, RunModel } from './run-types.ts';

/**
 * Why a fork did not do its directive, or undefined when it did. Only `completed` is success;
 * and a fork whose own report says `Result: not done` did not do it either, whatever its
 * status (before statuses said so, such a fork showed a green "completed").
 */
export function notDoneReason(fork: ForkRow): string | undefined {
  if (fork.status !== 'completed')
    return fork.error ? `${fork.status}: ${fork.error.code}: ${fork.error.message}` : fork.status;
  if (reportSaysNotDone(fork.report))
    return `its report says "${fork.report!.result!.trim()}"${fork.report?.issues ? `: ${fork.report.issues}` : ''}`;
  return undefined;
}

const statusCell = (f: ForkRow): Html => {
  const reported = f.status === 'completed' && notDoneReason(f) !== undefined;
  const shown = reported ? 'not done' : f.status;
  const css = reported ? 'failed' : f.status;
  const restarts = f.restarts > 0 ? ` (${f.restarts} worker restart${f.restarts > 1 ? 's' : ''})` : '';
  const note = reported ? ' <span class="meta">(status completed, report: not done)</span>' : '';
  return raw(`<span class="status-${escapeHtml(css)}">${escapeHtml(shown)}</span>${restarts}${note}`);
};

function reportHtml(report: ForkReport | undefined, error: ForkRow['error']): Html {
  const parts: string[] = [];
  if (error)
    parts.push(`<p class="status-failed"><code>${escapeHtml(error.code)}</code> ${escapeHtml(error.message)}</p>`);
  if (!report) return raw(parts.join('') || '<em>no final text</em>');
  const fields: [string, string | undefined][] = [
    ['Scope', report.scope],
    ['Result', report.result],
    ['Key files', report.keyFiles],
    ['Files changed', report.filesChanged],
    ['Issues', report.issues],
  ];
  const items = fields.filter(([, v]) => v !== undefined).map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v!)}</dd>`);
  // the Result reads at a glance; the rest opens on a click (no script: <details>)
  parts.push(
    `<details><summary>${escapeHtml(report.result ?? 'report')}</summary><dl class="report">${items.join('')}</dl></details>`,
  );
  if (report.missing.length > 0) parts.push(`<p><em>missing: ${escapeHtml(report.missing.join(', '))}</em></p>`);
  return raw(parts.join(''));
}

/** Every fork, in a box that scrolls on its own (its header stays), cells that wrap. */
export function forkTable(model: RunModel): string {
  const rows = model.forks.map((f) => [
    f.short,
    statusCell(f),
    f.turns,
    f.toolCalls,
    f.filesChanged.length === 0 ? 'none' : f.filesChanged.join(', '),
    f.directive,
    reportHtml(f.report, f.error),
  ]);
  return `<div class="scroll-box">${table(['fork', 'status', 'turns', 'tool calls', 'files changed', 'directive', 'report'], rows, 'forks')}</div>`;
}

/** The forks that did not do their directive, first on the page: status, why, and the directive. */
export function notDoneSection(model: RunModel): string {
  const missed = model.forks.flatMap((f) => {
    const why = notDoneReason(f);
    return why === undefined ? [] : [{ f, why }];
  });
  if (missed.length === 0)
    return `<h3>Not done</h3><p class="ok">Every fork of ${model.forks.length} completed its directive.</p>`;
  const rows = missed.map(({ f, why }) => [f.short, statusCell(f), why, f.directive]);
  return [
    `<h3 class="not-done">Not done: ${missed.length} of ${model.forks.length} forks</h3>`,
    `<div class="scroll-box short">${table(['fork', 'status', 'why', 'directive'], rows, 'not-done')}</div>`,
  ].join('\n');
}
