import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson, allCompleted } from './run-cli.ts';

describe('forkcache demo', () => {
  it('forks one child per file, renames the symbol in every file, and reports a perfect cache', async () => {
    const { code, stdout, stderr } = await forkcache([
      'demo',
      '--forks',
      '3',
      '--latency',
      'off',
      '--json',
      '--keep-workspace',
    ]);
    expect(stderr).toMatch(/3 forks on the local emulator/);
    expect(code).toBe(0);
    const summary = lastJson(stdout);
    expect(summary.forks).toEqual(allCompleted(3));
    expect(summary.leftovers).toEqual([]);
    expect(summary.cache.cache_efficiency).toBeGreaterThanOrEqual(0.99);
    expect(summary.prefix.drift_events).toBe(0);
    expect(summary.cost_usd.actual).toBeLessThan(summary.cost_usd.no_cache);
    const files = summary.fork_results.flatMap((f: { files_changed: string[] }) => f.files_changed).sort();
    expect(files).toEqual(['src/features/invoices.ts', 'src/features/orders.ts', 'src/lib/http.ts']);
    for (const file of files) {
      const text = readFileSync(join(summary.workspace, file), 'utf8');
      expect(text).toContain('loadData');
      expect(text).not.toContain('fetchData');
    }
    const runs = join(summary.workspace, '.forkcache', 'runs');
    expect(existsSync(runs)).toBe(true);
    const transcripts = readdirSync(join(runs, readdirSync(runs)[0]!, 'forks'));
    expect(transcripts).toHaveLength(3);
    // one name for a fork's id (issue 28): fork_id, the transcript's name; the old alias `id` went in 0.7.0
    const forks = summary.fork_results as Record<string, unknown>[];
    expect(forks.map((f) => `${f['fork_id'] as string}.jsonl`).sort()).toEqual([...transcripts].sort());
    for (const fork of forks) expect(fork).not.toHaveProperty('id');
  });

  it('refuses a bad flag with exit code 2, naming it', async () => {
    const { code, stderr } = await forkcache(['demo', '--forks', '0']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--forks: at least 1 \(got "0"\)/);
  });
});
