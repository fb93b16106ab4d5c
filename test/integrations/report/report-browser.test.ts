import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBenchReport, writeRunReport } from '../../../src/integrations/report/write-report.ts';
import { BENCH_FIXTURE, FIXTURE_RUN } from './helpers.ts';

/*
 * The report checked the way a person would: opened from disk in headless Chromium (Debian's
 * `chromium`; FORKCACHE_CHROMIUM overrides the path). The background-networking flags keep
 * Chromium from calling home, which this machine's closed network would refuse anyway.
 * FORKCACHE_UPDATE_SCREENSHOT=1 also refreshes docs/report.png for the README.
 */
const CHROMIUM = process.env['FORKCACHE_CHROMIUM'] ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const why = hasChromium
  ? `in ${CHROMIUM}`
  : `SKIPPED: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set FORKCACHE_CHROMIUM)`;
if (!hasChromium) console.warn(`test/integrations/report/report-browser.test.ts ${why}`);

interface ChartView {
  name: string;
  width: number;
  height: number;
  /** Painted shapes (filled or stroked paths and rects) with a non-empty laid-out box. */
  shapes: number;
  strokes: string[];
  texts: string[];
}

// Runs in the page (as a string: the project's types have no DOM): what each chart lays out.
const INSPECT_CHARTS = `[...document.querySelectorAll('figure.chart')].map((figure) => {
  const svg = figure.querySelector('svg');
  const box = svg.getBoundingClientRect();
  const painted = [...svg.querySelectorAll('path, rect')].filter((e) => {
    const b = e.getBBox();
    const fill = e.getAttribute('fill');
    const stroke = e.getAttribute('stroke');
    return (b.width > 0 || b.height > 0) && ((fill !== null && fill !== 'none' && e.getAttribute('fill-opacity') !== '0') || (stroke !== null && stroke !== 'none'));
  });
  return {
    name: figure.dataset.chart,
    width: box.width,
    height: box.height,
    shapes: painted.length,
    strokes: painted.filter((e) => e.getAttribute('fill') === 'none' && e.getBBox().width > box.width / 2).map((e) => e.getAttribute('stroke')),
    texts: [...svg.querySelectorAll('text')].map((t) => t.textContent),
  };
})`;

describe('the HTML report in headless Chromium', () => {
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    if (!hasChromium) return;
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'fc-chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1040, height: 900 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await context?.close();
  });

  async function open(file: string) {
    const page = await context!.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    return { page, requests, errors };
  }

  it.skipIf(!hasChromium)(`run report: four non-empty charts and a row per fork (${why})`, async () => {
    // A relative RUN_DIR, as a user types it (and as the README's screenshot shows it).
    const { out } = writeRunReport(relative(process.cwd(), FIXTURE_RUN), {
      out: join(mkdtempSync(join(tmpdir(), 'fc-report-')), 'report.html'),
    });
    const { page, requests, errors } = await open(out);
    expect(requests.every((u) => u.startsWith('file://'))).toBe(true); // self-contained
    expect(errors).toEqual([]);
    const charts = await page.evaluate<ChartView[]>(INSPECT_CHARTS);
    expect(charts.map((c) => c.name)).toEqual(['timeline', 'tokens', 'cost', 'hit-ratio']);
    for (const chart of charts) {
      expect(chart.width).toBeGreaterThan(600);
      expect(chart.height).toBeGreaterThan(200);
    }
    const [timeline, tokens, cost, hit] = charts as [ChartView, ChartView, ChartView, ChartView];
    // 8 forks × (queued + running + warming + 4 requests) spans, plus axes and legend.
    expect(timeline.shapes).toBeGreaterThanOrEqual(8 * 7);
    for (const label of ['f01', 'f08', 'queued', 'warming (1st request held)', 'model request'])
      expect(timeline.texts).toContain(label);
    // 32 requests, each with a read and a written bar.
    expect(tokens.shapes).toBeGreaterThanOrEqual(64);
    // Three cumulative lines across the plot: actual, no cache, fresh agents.
    expect(cost.strokes).toEqual(expect.arrayContaining(['#1c7ed6', '#e03131', '#7048e8']));
    expect(hit.texts).toContain('fan-out');
    expect(hit.shapes).toBeGreaterThanOrEqual(9);
    const rows = await page.$$eval('table.forks tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    expect(rows).toHaveLength(8);
    for (const row of rows) {
      expect(row[1]).toBe('completed');
      expect(row[6]).toMatch(/^renamed.*Scope.*Result.*renamed/s); // the Result, then the report behind <details>
    }
    const png = await page.screenshot({ fullPage: true });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    if (process.env['FORKCACHE_UPDATE_SCREENSHOT'] === '1') {
      mkdirSync('docs', { recursive: true });
      writeFileSync(
        'docs/report.png',
        await page.screenshot({ clip: { x: 0, y: 0, width: 1040, height: 1900 }, fullPage: true }),
      );
    }
    await page.close();
  });

  it.skipIf(!hasChromium)(`bench report: savings lines per strategy and the suites' tables (${why})`, async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'fc-bench-')), 'latest.json');
    writeFileSync(path, readFileSync(BENCH_FIXTURE));
    const { out } = writeBenchReport(path);
    const { page, requests } = await open(out);
    expect(requests.every((u) => u.startsWith('file://'))).toBe(true);
    const charts = await page.evaluate<ChartView[]>(INSPECT_CHARTS);
    expect(charts.map((c) => c.name)).toEqual(['savings-savings_vs_no_cache', 'savings-savings_vs_fresh_agents']);
    for (const chart of charts) {
      expect(chart.strokes.length).toBeGreaterThanOrEqual(3); // one line per strategy
      for (const strategy of ['first-child', 'prewarm', 'none']) expect(chart.texts).toContain(strategy);
    }
    const rowCounts = await page.$$eval('section.suite table tbody', (bodies) =>
      bodies.map((b) => b.querySelectorAll('tr').length),
    );
    expect(rowCounts).toEqual([2, 15, 2]);
    await page.close();
  });
});
