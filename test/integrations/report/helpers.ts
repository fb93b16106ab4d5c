import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A real run directory, written by `forkcache demo` (8 forks, warm first-child). */
export const FIXTURE_RUN = fileURLToPath(new URL('../../fixtures/runs/fo001-e3a67061', import.meta.url));
export const FIXTURE_ID = 'fo001-e3a67061';

/** `npm run bench` results with an economics suite and a suite of unknown shape. */
export const BENCH_FIXTURE = fileURLToPath(new URL('../../fixtures/bench/results.json', import.meta.url));

/** A writable copy of the fixture run inside a fresh runs directory. */
export function copyRun(name = FIXTURE_ID): { runs: string; dir: string } {
  const runs = mkdtempSync(join(tmpdir(), 'fc-report-'));
  const dir = join(runs, name);
  cpSync(FIXTURE_RUN, dir, { recursive: true });
  return { runs, dir };
}

/** Rewrite a JSONL file line by line (`undefined` drops the line). */
export function editJsonl(
  path: string,
  edit: (record: Record<string, any>, line: number) => Record<string, any> | undefined,
): void {
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
  const out = lines.flatMap((text, i) => {
    const next = edit(JSON.parse(text) as Record<string, any>, i + 1);
    return next === undefined ? [] : [JSON.stringify(next)];
  });
  writeFileSync(path, `${out.join('\n')}\n`);
}

/**
 * The fixture run grown to `n` forks (real files in a fresh directory): fork i repeats the
 * records of fixture fork i mod 8, renamed, a batch of 8 after the other, as a run of `n`
 * forks through 8 slots would be. `notDone` forks get a report that says `Result: not done`.
 */
export function scaledRun(n: number, notDone: readonly number[] = []): string {
  const { dir } = copyRun();
  const id = (i: number): string => `${FIXTURE_ID}-f${String(i + 1).padStart(n > 99 ? 3 : 2, '0')}`;
  const source = (i: number): string => `${FIXTURE_ID}-f${String((i % 8) + 1).padStart(2, '0')}`;
  const records = readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
  const t0 = records[0]!['at'] as number;
  const span = Math.max(...records.map((r) => r['at'] as number)) - t0;
  const shift = (r: Record<string, any>, by: number): Record<string, any> => {
    const out: Record<string, any> = { ...r, at: r['at'] + by };
    if (r['request'])
      out['request'] = {
        ...r['request'],
        sentAt: r['request'].sentAt + by,
        startedAt: r['request'].startedAt + by,
        endedAt: r['request'].endedAt + by,
      };
    return out;
  };
  const batches = Math.ceil(n / 8);
  const out: Record<string, any>[] = [];
  for (const r of records) {
    if (r['type'] === 'fanout-start')
      out.push({
        ...r,
        forks: Array.from({ length: n }, (_, i) => ({
          forkId: id(i),
          directive: `rename fetchData to loadData in src/f${i + 1}.ts`,
        })),
      });
    else if (r['type'] === 'fanout-end') out.push(shift(r, (batches - 1) * span));
    else if (r['forkId'] === undefined) out.push(r);
  }
  for (let i = 0; i < n; i++)
    for (const r of records)
      if (r['forkId'] === source(i)) out.push({ ...shift(r, Math.floor(i / 8) * span), forkId: id(i) });
  writeFileSync(join(dir, 'events.jsonl'), `${out.map((r) => JSON.stringify(r)).join('\n')}\n`);
  for (let i = 0; i < n; i++) {
    let text = readFileSync(join(FIXTURE_RUN, 'forks', `${source(i)}.jsonl`), 'utf8').replaceAll(source(i), id(i));
    if (notDone.includes(i)) text = text.replace(/Result: [^\\"]*/g, 'Result: not done');
    writeFileSync(join(dir, 'forks', `${id(i)}.jsonl`), text);
  }
  return dir;
}
