import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache } from './run-cli.ts';

describe('forkcache check-file (the command)', () => {
  it('exits 0 when the file holds, 1 with the places when not, 2 on a bad option', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-check-file-cli-'));
    writeFileSync(join(dir, 'ok.py'), '# fetchData\nprint("fetchData")\n');
    writeFileSync(join(dir, 'bad.py'), 'def fetchData():\n    return 1\n');
    const ok = await forkcache(['check-file', '--parses', '--no-identifier', 'fetchData', join(dir, 'ok.py')]);
    expect([ok.code, ok.stdout]).toEqual([0, '']);
    const bad = await forkcache(['check-file', '--parses', '--no-identifier', 'fetchData', join(dir, 'bad.py')]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/bad\.py:1:5: fetchData is still an identifier/);
    const wrong = await forkcache(['check-file', '--nope', join(dir, 'ok.py')]);
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringMatching(/unknown option --nope/)]);
  });
});
