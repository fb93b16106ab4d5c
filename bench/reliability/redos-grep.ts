// Issue 15, case 2: grep with a catastrophic-backtracking pattern. With RegExp, `(a+)+$` on a
// 27-character line took 13 s and on 41 characters never returned; with RE2 it is linear.
// Run: npx tsx bench/reliability/redos-grep.ts
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToolExecutor } from '../../src/core/tools/executor.ts';

const dir = mkdtempSync(join(tmpdir(), 'fc-bench-redos-'));
const rows: unknown[] = [];
for (const length of [27, 41, 10_000, 1_000_000]) {
  writeFileSync(join(dir, 'evil.txt'), `${'a'.repeat(length)}b\n`);
  const tools = createToolExecutor({ workspace: dir, limits: { maxGrepFileBytes: 4 * 1024 * 1024 } });
  const t0 = performance.now();
  const result = await tools.execute('grep', { pattern: '(a+)+$' });
  rows.push({
    line_chars: length + 1,
    pattern: '(a+)+$',
    ms: Math.round((performance.now() - t0) * 10) / 10,
    result: result.content,
  });
}
console.log(rows.map((r) => JSON.stringify(r)).join('\n'));
