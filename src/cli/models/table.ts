import { PRICING_HINT } from '../../core/models/status.ts';
import type { ApiView, BandView, ModelView, ModelsView, RatesView } from './view.ts';

/** `forkcache models` for the terminal: the catalogue as a table, then the endpoint's list. */

const count = (n: number): string => n.toLocaleString('en-US');

/** 8 → `8`, 0.2 → `0.20`, 0.125 → `0.125`: at least cents, never a rounded-away digit. */
export function price(n: number): string {
  if (Number.isInteger(n)) return String(n);
  const exact = String(Math.round(n * 1e6) / 1e6);
  const decimals = exact.split('.')[1]?.length ?? 0;
  return n.toFixed(Math.max(2, decimals));
}

/** 1,000,000 → `1M`, 128,000 → `128K`. */
function size(n: number): string {
  if (n % 1_000_000 === 0) return `${n / 1_000_000}M`;
  if (n % 1000 === 0) return `${n / 1000}K`;
  return count(n);
}

function priceCells(label: string, r: RatesView, multiplier: number): string[] {
  return [
    `${label}${price(r.input_per_mtok)} / ${price(r.output_per_mtok)}`,
    price(r.cache_write_5m_per_mtok),
    price(r.cache_write_1h_per_mtok),
    price(r.cache_read_per_mtok),
    `${multiplier}x`,
  ];
}

function bandLabel(band: BandView, previous: BandView | undefined): string {
  const limit =
    band.up_to_prompt_tokens !== null
      ? `≤${count(band.up_to_prompt_tokens)}`
      : previous?.up_to_prompt_tokens != null
        ? `>${count(previous.up_to_prompt_tokens)}`
        : '';
  return `${band.name} ${limit}: `;
}

type Line = { cells: string[] } | { note: string };

/** A model's row (one per band), then its notes: aliases, end of life, replacement. */
function modelLines(m: ModelView): Line[] {
  const tail = [count(m.min_cacheable_tokens), `${size(m.context_window)} / ${size(m.max_output_tokens)}`];
  const lines: Line[] = [];
  if (m.bands) {
    m.bands.forEach((band, i) => {
      const head = i === 0 ? [m.id, m.status] : ['', ''];
      lines.push({
        cells: [
          ...head,
          ...priceCells(bandLabel(band, m.bands?.[i - 1]), band, band.read_multiplier),
          ...(i === 0 ? tail : ['', '']),
        ],
      });
    });
  } else {
    const cells =
      m.prices && m.read_multiplier !== null ? priceCells('', m.prices, m.read_multiplier) : ['-', '-', '-', '-', '-'];
    lines.push({ cells: [m.id, m.status, ...cells, ...tail] });
  }
  if (m.aliases.length > 0) lines.push({ note: `also ${m.aliases.join(', ')}` });
  if (m.status === 'deprecated') lines.push({ note: `end of life ${m.end_of_life}; use ${m.replacement} instead` });
  if (m.status === 'retired')
    lines.push({
      note: `retired${m.end_of_life ? ` on ${m.end_of_life}` : ''}: requests fail; use ${m.replacement} instead`,
    });
  return lines;
}

// A fixed-width table is a few lines; a table library would add a dependency for no gain.
function table(lines: Line[]): string[] {
  const rows = lines.flatMap((l) => ('cells' in l ? [l.cells] : []));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  const indent = ' '.repeat(2);
  return lines.map((l) =>
    'cells' in l
      ? l.cells
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd()
      : `${indent}${l.note}`,
  );
}

const HEADER = [
  'model',
  'status',
  'input / output',
  '5m write',
  '1h write',
  'read',
  'read x',
  'min cache',
  'context / out',
];

/** One line per price source: what it is, when it was read, which models it prices. */
function sourceLines(view: ModelsView): string[] {
  const groups = new Map<string, string[]>();
  for (const m of view.models) {
    if (m.prices === null) continue;
    const s = m.price_source;
    const key = `${s.name}, retrieved ${s.retrieved}${s.third_party ? ' (a third-party copy, not checked live)' : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), m.id]);
  }
  return [...groups].map(([source, ids]) => `Prices from ${source}: ${ids.join(', ')}.`);
}

export function formatModels(view: ModelsView, source: string): string {
  const lines: Line[] = [{ cells: HEADER }, ...view.models.flatMap(modelLines)];
  const later =
    view.hidden_later > 0
      ? `; ${view.hidden_later} not priced until after ${view.as_of} hidden (they did not exist yet)`
      : '';
  const hidden = `${view.hidden_retired > 0 ? `; ${view.hidden_retired} retired hidden (--retired shows them)` : ''}${later}`;
  return [
    `Model catalogue of ${view.date} (${source}): status and prices on ${view.as_of}, USD per million tokens`,
    '',
    ...table(lines),
    '',
    `${view.models.length} models${hidden}. read x: the read price as a multiple of the input price.`,
    ...sourceLines(view),
    "Banded: a request's prompt length (input + cache write + cache read tokens) picks the band, which prices all its tokens.",
    `Ids not in the catalogue still run, unpriced (cost null). To add or correct one, ${PRICING_HINT}.`,
    '',
  ].join('\n');
}

export function formatApi(api: ApiView): string {
  const rows: Line[] = [{ cells: ['id', 'lifecycle', 'catalogue'] }];
  for (const m of api.models) {
    const mark =
      m.mark === 'unpriced'
        ? 'unpriced: not in the catalogue'
        : m.mark === 'retired'
          ? `retired in the catalogue (${m.catalogue_id})`
          : m.catalogue_id === m.id
            ? 'priced'
            : `priced as ${m.catalogue_id}`;
    rows.push({ cells: [m.id, m.lifecycle ?? '-', mark] });
  }
  const missing =
    api.not_listed.length > 0
      ? `Catalogue models the endpoint does not list: ${api.not_listed.join(', ')}`
      : 'The endpoint lists every catalogue model.';
  return [`GET /v1/models at ${api.base_url}: ${api.models.length} models`, '', ...table(rows), '', missing, ''].join(
    '\n',
  );
}
