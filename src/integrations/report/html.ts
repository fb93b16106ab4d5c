/** Escape text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A value that is already HTML (not escaped again by `table`). */
export interface Html {
  html: string;
}

export const raw = (html: string): Html => ({ html });

const cell = (value: string | number | Html): string =>
  typeof value === 'object' ? value.html : escapeHtml(String(value));

/** A plain table; numbers are right-aligned. */
export function table(headers: (string | Html)[], rows: (string | number | Html)[][], className = ''): string {
  const head = headers.map((h) => `<th>${cell(h)}</th>`).join('');
  const body = rows
    .map(
      (r) => `<tr>${r.map((v) => `<td${typeof v === 'number' ? ' class="num"' : ''}>${cell(v)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table${className ? ` class="${className}"` : ''}><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** A chart figure: the inline SVG and a caption saying what it shows. */
export function figure(name: string, svg: string, caption: string): string {
  return `<figure class="chart" data-chart="${escapeHtml(name)}">${svg}<figcaption>${escapeHtml(caption)}</figcaption></figure>`;
}

const CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1000px; color: #212529; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #dee2e6; }
h3 { font-size: 15px; }
.meta { color: #495057; margin-top: 0; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; font-size: 13px; }
th, td { border-bottom: 1px solid #e9ecef; padding: 4px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure.chart { margin: 12px 0; } figure.chart svg { max-width: 100%; height: auto; }
figcaption { color: #495057; font-size: 12px; }
.status-completed { color: #2b8a3e; } .status-failed { color: #c92a2a; } .status-cancelled { color: #e67700; }
.report { display: grid; grid-template-columns: max-content 1fr; gap: 2px 8px; margin: 0; }
.report dt { font-weight: 600; } .report dd { margin: 0; white-space: pre-wrap; }
td { overflow-wrap: anywhere; }
.scroll-box { max-height: 640px; overflow: auto; border: 1px solid #dee2e6; margin: 8px 0; }
.scroll-box.short { max-height: 320px; }
.scroll-box table { margin: 0; }
.scroll-box thead th { position: sticky; top: 0; background: #f8f9fa; z-index: 1; }
table.forks { table-layout: fixed; }
table.forks th:nth-child(1) { width: 48px; } table.forks th:nth-child(2) { width: 96px; }
table.forks th:nth-child(3), table.forks th:nth-child(4) { width: 48px; }
table.forks th:nth-child(5) { width: 18%; } table.forks th:nth-child(6) { width: 24%; }
h3.not-done { color: #c92a2a; }
details summary { cursor: pointer; }
table.bench { display: block; overflow-x: auto; }
ul.diagnostics li { margin: 2px 0; } .ok { color: #2b8a3e; }
code { font-size: 12px; }
`;

/** The whole self-contained page: inline CSS and SVG, no script, nothing fetched. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
${body}
</body>
</html>
`;
}
