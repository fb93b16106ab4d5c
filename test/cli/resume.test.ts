import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson, allCompleted } from './run-cli.ts';

describe('forkcache resume RUN_DIR', () => {
  it('does not re-run a finished run: every fork is already completed', async () => {
    const demo = await forkcache(['demo', '--forks', '2', '--latency', 'off', '--json', '--keep-workspace']);
    expect(demo.code).toBe(0);
    const { workspace } = lastJson(demo.stdout);
    const { code, stdout, stderr } = await forkcache(['resume', join(workspace, '.forkcache', 'runs'), '--json']);
    expect(stderr).toMatch(/forkcache resume: fo001-\w+ \(2 forks\) against the embedded emulator/);
    expect(code).toBe(0);
    const summary = lastJson(stdout);
    expect(summary.forks).toEqual(allCompleted(2));
    // no fork request was sent again: the forks' usage is what their transcripts hold
    expect(summary.fork_results.map((f: { turns: number }) => f.turns)).toEqual([4, 4]);
    const fanDir = join(workspace, '.forkcache', 'runs', readdirSync(join(workspace, '.forkcache', 'runs'))[0]!);
    for (const file of readdirSync(join(fanDir, 'forks'))) {
      const turns = readFileSync(join(fanDir, 'forks', file), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"turn"'));
      expect(turns).toHaveLength(4); // nothing appended by the resume
    }
  });

  it('names what is missing in a directory that is not a run', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'fc-resume-'));
    const none = await forkcache(['resume', empty]);
    expect(none.code).toBe(2);
    // the message of the one locator (src/core/run-dir/locate.ts), shared with `forkcache report`
    expect(none.stderr).toMatch(/: no manifest\.json here nor in any sub-directory/);
    writeFileSync(join(empty, 'manifest.json'), '{"v":2}');
    const bad = await forkcache(['resume', empty]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/manifest\.json: .*v/);
  });
});
