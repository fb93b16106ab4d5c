import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A real fan-out directory, written by `forkcache demo` (8 forks, warm first-child). */
export const FIXTURE_RUN = fileURLToPath(new URL('../fixtures/runs/fo001-e3a67061', import.meta.url));
export const FIXTURE_ID = 'fo001-e3a67061';

/** `npm run bench` results with an economics suite and a suite of unknown shape. */
export const BENCH_FIXTURE = fileURLToPath(new URL('../fixtures/bench/results.json', import.meta.url));

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
