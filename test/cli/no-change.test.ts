import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson } from './run-cli.ts';

// A change that did nothing is its own outcome (`no_change`): a rename of a name that is in no
// file ends with exit 1 and every fork counted as having changed nothing; `requireChange`
// makes each such fork not done. On real code nobody here wrote: commander's own lib/ sources
// (command.js left out: 2,800 lines the emulator pages through, and nothing more to prove).

function commanderRepo(): string {
  // the package's main entry is its index.js, beside lib/
  const lib = join(dirname(createRequire(import.meta.url).resolve('commander')), 'lib');
  const dir = mkdtempSync(join(tmpdir(), 'fc-nochange-'));
  cpSync(lib, join(dir, 'lib'), { recursive: true });
  rmSync(join(dir, 'lib/command.js'));
  return dir;
}

const tree = (dir: string): Record<string, string> =>
  Object.fromEntries(readdirSync(join(dir, 'lib')).map((f) => [f, readFileSync(join(dir, 'lib', f), 'utf8')]));

async function plan(dir: string, directive: string, ...flags: string[]): Promise<Record<string, any>> {
  const out = join(dir, 'plan.json');
  const made = await forkcache([
    'plan',
    '--workspace',
    dir,
    '--files',
    'lib/*.js',
    '--directive',
    directive,
    '--out',
    out,
    ...flags,
  ]);
  expect(made.code, made.stderr).toBe(0);
  return JSON.parse(readFileSync(out, 'utf8')) as Record<string, any>;
}

describe('a fork that changed no file ends no_change', () => {
  it('a rename of a name in no file: every fork no_change, nothing changed, exit 1', async () => {
    const dir = commanderRepo();
    const before = tree(dir);
    const written = await plan(dir, 'rename isFuncton to isFn in {file}');
    // the check `forkcache plan` writes for a rename: the file parses, the old name is no identifier
    expect(written['check']).toBe('forkcache check-file --parses --no-identifier isFuncton {file}');
    const run = await forkcache(['run', join(dir, 'plan.json'), '--api', 'emulator', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const summary = lastJson(run.stdout);
    expect(summary['forks']).toMatchObject({ total: 5, no_change: 5, completed: 0 });
    expect(summary['no_change']).toEqual({ forks: 5, require_change: false });
    expect(summary['fork_results'].map((f: { status: string }) => f.status)).toEqual(Array(5).fill('no_change'));
    expect(run.stderr).toMatch(/5 of 5 fork\(s\) not done:/);
    expect(run.stderr).toMatch(/no_change {2}\S+-f01: FORK_NO_CHANGE: the fork reported done and changed no file/);
    // the retry line is not the first thing to do: a retry asks the same of the same files
    expect(run.stderr).toMatch(
      /^not one fork changed a file: check the directives .* before a retry\nretry them with: /m,
    );
    expect(tree(dir)).toEqual(before);
    // the table says it too
    const text = await forkcache(['run', join(dir, 'plan.json'), '--api', 'emulator']);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/changed no file {2}5 of 5 fork\(s\) \(no_change\), every fork: the run did nothing/);
  });

  it('a name in some files: the others are no_change, done by default, not done under --require-change', async () => {
    const dir = commanderRepo();
    const holders = Object.entries(tree(dir))
      .filter(([, text]) => /\bhumanReadableArgName\b/.test(text))
      .map(([f]) => f)
      .sort();
    expect(holders).toEqual(['argument.js', 'help.js']);
    await plan(dir, 'rename humanReadableArgName to readableArgName in {file}');
    const loose = await forkcache(['run', join(dir, 'plan.json'), '--api', 'emulator', '--json']);
    expect(loose.code, loose.stderr).toBe(0);
    expect(lastJson(loose.stdout)['forks']).toMatchObject({ total: 5, completed: 2, no_change: 3 });
    for (const f of holders) expect(tree(dir)[f]).toMatch(/\breadableArgName\b/);

    const strict = commanderRepo();
    const required = await plan(strict, 'rename humanReadableArgName to readableArgName in {file}', '--require-change');
    expect(required['requireChange']).toBe(true);
    const run = await forkcache(['run', join(strict, 'plan.json'), '--api', 'emulator', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const summary = lastJson(run.stdout);
    expect(summary['no_change']).toEqual({ forks: 3, require_change: true });
    expect(run.stderr).toMatch(/3 of 5 fork\(s\) not done:/);
    expect(run.stderr).not.toContain('not one fork changed a file');
    // status reads the run directory the same way
    const status = await forkcache(['status', join(strict, '.forkcache/runs')]);
    expect(status.stdout).toMatch(/5 forks, 2 completed, 3 changed no file/);
    expect(status.stdout.match(/^not done .* no_change/gm)).toHaveLength(3);
  });
});
