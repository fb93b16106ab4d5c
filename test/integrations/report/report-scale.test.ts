import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRunReport } from '../../../src/integrations/report/write-report.ts';
import { scaledRun } from './helpers.ts';

// Issue 27: at 80 forks / 318 requests two charts carried 318 overlapping axis labels, the
// fork table was clipped at 1280 px, and a fork whose report said "not done" showed a green
// "completed". Checked in headless Chromium at 1280 px, on runs of 80 and 500 forks.
const CHROMIUM = process.env['FORKCACHE_CHROMIUM'] ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);

describe.skipIf(!hasChromium)('the run report at 80 and 500 forks, at 1280 px', () => {
  let context: BrowserContext | undefined;
  beforeAll(async () => {
    context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'fc-chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  });
  afterAll(async () => context?.close());

  it.each([80, 500])(
    '%i forks: axes aggregate, the page fits the width, the table scrolls in its box, not-done first',
    async (n) => {
      const dir = scaledRun(n, [6]);
      const { out } = writeRunReport(dir, { out: join(mkdtempSync(join(tmpdir(), 'fc-report-')), 'report.html') });
      const page = await context!.newPage();
      await page.goto(pathToFileURL(out).href);
      const view = await page.evaluate<{
        pageWidth: number;
        charts: Record<string, { labels: number; width: number }>;
        box: { client: number; scroll: number; width: number };
        firstH3: string;
        notDone: string[];
        status7: string;
      }>(`(() => {
      const charts = {};
      for (const f of document.querySelectorAll('figure.chart')) {
        const svg = f.querySelector('svg');
        // category labels: the rotated texts under the x axis
        const labels = [...svg.querySelectorAll('text')].filter((t) => /rotate/.test(t.getAttribute('transform') ?? '')).length;
        charts[f.dataset.chart] = { labels, width: svg.getBoundingClientRect().width };
      }
      const box = document.querySelector('table.forks').parentElement;
      return {
        pageWidth: document.documentElement.scrollWidth,
        charts,
        box: { client: box.clientHeight, scroll: box.scrollHeight, width: box.getBoundingClientRect().right },
        firstH3: document.querySelector('section.fanout h3').textContent,
        notDone: [...document.querySelectorAll('table.not-done tbody tr')].map((tr) => tr.textContent),
        status7: document.querySelectorAll('table.forks tbody tr')[6].querySelectorAll('td')[1].textContent,
      };
    })()`);
      expect(view.pageWidth).toBeLessThanOrEqual(1280); // nothing pushes the page wider
      expect(view.box.width).toBeLessThanOrEqual(1280);
      expect(view.box.scroll).toBeGreaterThan(view.box.client); // the fork table scrolls inside its box
      for (const name of ['tokens', 'hit-ratio']) expect(view.charts[name]!.labels).toBeLessThanOrEqual(41);
      expect(view.firstH3).toBe(`Not done: 1 of ${n} forks`);
      expect(view.notDone).toHaveLength(1);
      expect(view.notDone[0]).toMatch(/its report says "not done"/);
      expect(view.status7).toMatch(/^not done/);
      await page.close();
    },
    120_000,
  );
});
