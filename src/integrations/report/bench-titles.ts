/*
 * Benchmark column names as people read them: `savings_vs_no_cache` → "savings vs no cache (%)",
 * `sab_ms` → "SharedArrayBuffer round trip (ms)". Known names first; any other is spelled out
 * from its parts (unit suffixes, `_vs_`), so a suite added later still gets a readable title.
 */

const KNOWN: Record<string, string> = {
  sab_ms: 'SharedArrayBuffer round trip (ms)',
  string_ms: 'string copy round trip (ms)',
  msgpackr_ms: 'msgpackr round trip (ms)',
  clone_ms: 'structured clone round trip (ms)',
  string_vs_sab: 'string copy ÷ SharedArrayBuffer (×)',
  msgpackr_vs_sab: 'msgpackr ÷ SharedArrayBuffer (×)',
  msgpackr_vs_clone: 'msgpackr ÷ structured clone (×)',
  savings_vs_no_cache: 'savings vs no cache (%)',
  savings_vs_fresh_agents: 'savings vs fresh agents (%)',
  fanout_hit_ratio: 'fan-out hit ratio',
  cache_efficiency: 'cache efficiency (1 = every shared token read)',
  shared_tokens: 'shared prefix (tokens)',
  read_multiplier: 'cache-read price ÷ input price (×)',
  makespan_s: 'makespan (s)',
  min_makespan_s: 'shortest possible makespan (s)',
  ratio_to_min: 'makespan ÷ shortest possible (×)',
  http_429: 'HTTP 429 responses',
  http_429_after_1min: 'HTTP 429 after the first minute',
  rss_mib: 'process RSS (MiB)',
  per_fork_pct_of_prefix: 'growth per fork (% of the prefix)',
  forks_per_s: 'forks per second',
  prefix: 'shared prefix',
  arm: 'variant',
};

const UNITS: [RegExp, string][] = [
  [/_ms$/, 'ms'],
  [/_s$/, 's'],
  [/_usd$/, 'USD'],
  [/_mib$/, 'MiB'],
  [/_kib$/, 'KiB'],
  [/_bytes$/, 'bytes'],
  [/_pct$/, '%'],
];

/** A column's title for a table header or an axis. */
export function benchTitle(column: string): string {
  const known = KNOWN[column];
  if (known) return known;
  let name = column;
  let unit: string | undefined;
  for (const [suffix, u] of UNITS)
    if (suffix.test(name)) {
      name = name.replace(suffix, '');
      unit = u;
      break;
    }
  const words = name.replaceAll('_vs_', ' vs ').replaceAll('_', ' ');
  return unit ? `${words} (${unit})` : words;
}
