import { describe, expect, it } from 'vitest';
import { benchTitle } from '../../../src/integrations/report/bench-titles.ts';

describe('benchmark column titles', () => {
  it('names known fields as people read them, with their units', () => {
    expect(benchTitle('savings_vs_no_cache')).toBe('savings vs no cache (%)');
    expect(benchTitle('sab_ms')).toBe('SharedArrayBuffer round trip (ms)');
  });

  it('spells out fields it does not know from their unit suffix', () => {
    expect(benchTitle('queue_wait_ms')).toBe('queue wait (ms)');
    expect(benchTitle('peak_rss_mib')).toBe('peak rss (MiB)');
    expect(benchTitle('cost_usd')).toBe('cost (USD)');
    expect(benchTitle('a_vs_b')).toBe('a vs b');
    expect(benchTitle('forks')).toBe('forks');
  });
});
