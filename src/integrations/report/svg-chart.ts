/*
 * Charts are drawn by Apache ECharts' server-side SVG renderer (`ssr: true` +
 * `renderToSVGString()`). Why ECharts: it renders real SVG in Node with no DOM, no canvas and
 * no native module (zrender's SVG painter is pure JS), so the report stays one static file
 * that needs no script and no network to view; and it has the chart types a report needs
 * (stacked bars, lines, custom timelines) with axes and legends done properly. Vega-Lite can
 * also render SVG in Node, through a compiler step and a grammar of its own; D3 would mean
 * drawing axes and legends by hand.
 * Only the parts used are registered (the `echarts/core` entry), which keeps start-up short.
 */
import { BarChart, CustomChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkLineComponent, TitleComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';

echarts.use([
  BarChart,
  CustomChart,
  LineChart,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  SVGRenderer,
]);

/** An ECharts option object (typed loosely: the report builds a handful of fixed shapes). */
export type ChartOption = Record<string, unknown>;

/** Colours shared by every chart, so a phase or a token kind has one colour across the page. */
export const COLORS = {
  read: '#2f9e44',
  written: '#f08c00',
  uncached: '#e03131',
  actual: '#1c7ed6',
  noCache: '#e03131',
  fresh: '#7048e8',
  ceiling: '#868e96',
  queued: '#ced4da',
  warming: '#fab005',
  running: '#74c0fc',
  request: '#1864ab',
  done: '#b2f2bb',
} as const;

/*
 * Without a canvas, zrender lays text out with a built-in table of Arial-like glyph widths.
 * Asking the viewer for Arial or a metric-compatible face (Liberation Sans on Linux) keeps
 * legends and labels from overlapping; a wider default face (DejaVu Sans) would not.
 */
// Unquoted: zrender writes the family into a double-quoted style attribute without escaping.
const FONT = 'Arial, Liberation Sans, Helvetica, sans-serif';

let sequence = 0;

/**
 * Render one chart to an SVG string. Animation is off (a static file has no frames), and the
 * chart is disposed at once: a live ECharts instance keeps a timer that would hold the
 * process open.
 */
export function renderSvg(option: ChartOption, size: { width: number; height: number }): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: size.width, height: size.height });
  try {
    chart.setOption({ animation: false, textStyle: { fontFamily: FONT }, ...option });
    const svg = chart.renderToSVGString();
    // Each SVG carries a <style> with hover rules named zr<N>-cls-<M>; in one HTML page those
    // names would collide between charts, so give every chart its own.
    const id = ++sequence;
    return svg.replace(/\bzr(\d+)-cls-/g, `fc${id}-zr$1-cls-`);
  } finally {
    chart.dispose();
  }
}
