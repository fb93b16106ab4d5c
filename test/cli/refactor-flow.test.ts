import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type GlobPlanInput, planFromGlob } from '../../src/cli/plan/from-glob.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 23, the refactor as a product: `forkcache plan` makes the plan from a glob, `run` tells
// which forks did not do their directive (and exits 1), `resume --retry` runs just those again.

function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fc-flow-'));
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/a.ts'), "export const fetchData = () => 'a';\n");
  writeFileSync(join(dir, 'src/b.ts'), "import { fetchData } from './a';\nexport const b = fetchData();\n");
  writeFileSync(join(dir, 'src/c.ts'), "import { fetchData } from './a';\nexport const c = fetchData();\n");
  writeFileSync(join(dir, 'src/other.ts'), 'export const other = 1;\n');
  return dir;
}

const ws = (dir: string, file: string): string => readFileSync(join(dir, file), 'utf8');

/** `forkcache plan` on `dir`'s src/*.ts with a trivial directive, and more flags. */
const planCli = (dir: string, ...flags: string[]) =>
  forkcache(['plan', '--workspace', dir, '--files', 'src/*.ts', '--directive', 'x {file}', ...flags]);

describe('forkcache plan', () => {
  it('writes one directive per file that matches the glob and the regex, sorted, with a default parent', async () => {
    const dir = repo();
    const out = join(dir, 'plan.json');
    const made = await forkcache([
      'plan',
      ...['--workspace', dir, '--files', 'src/**/*.ts', '--grep', '\\bfetchData\\b'],
      ...['--directive', 'rename fetchData to loadData in {file}', '--check', '! grep -qw fetchData {file}'],
      ...['--out', out],
    ]);
    expect(made.code).toBe(0);
    expect(made.stderr).toMatch(/3 directive\(s\), one per file/);
    const plan = JSON.parse(ws(dir, 'plan.json')) as Record<string, any>;
    expect(plan['directives']).toEqual(
      ['src/a.ts', 'src/b.ts', 'src/c.ts'].map((file) => ({
        directive: `rename fetchData to loadData in ${file}`,
        file,
      })),
    );
    expect(plan['workspace']).toBe('.');
    expect(plan['check']).toBe('! grep -qw fetchData {file}');
    expect(plan['parent'].tools.map((t: { name: string }) => t.name)).toContain('edit_file');
    expect(plan['parent'].messages[0].content[0].text).toMatch(
      /^Repository: fc-flow-\w+ \(the workspace root\)\.\nTask: rename fetchData to loadData in <file>/,
    );
  });

  it('refuses no matches, a bad regex, a missing workspace and a template without {file}, naming the flag', async () => {
    const dir = repo();
    const base = { workspace: dir, files: 'src/*.ts', directive: 'rename x to y in {file}', model: 'claude-opus-5-5' };
    const refusal = (input: Partial<GlobPlanInput>): Promise<unknown> =>
      planFromGlob({ ...base, ...input }).catch((e) => e);
    const cases: [Partial<GlobPlanInput>, RegExp][] = [
      [{ grep: 'nowhere' }, /^--grep: 4 file\(s\) match src\/\*\.ts, and none has a line matching nowhere$/],
      [{ files: 'lib/*.ts' }, /^--files: no file under .* matches lib\/\*\.ts$/],
      [{ files: '../*.ts' }, /^--files: glob \.\.\/\*\.ts leaves the workspace/],
      [{ grep: '(?<=x)y' }, /^--grep: invalid regular expression \(RE2 syntax/],
      [{ workspace: join(dir, 'nope') }, /^--workspace: .*nope does not exist$/],
      [{ directive: 'rename x' }, /^--directive: put \{file\} where the file goes/],
      // the repo() workspace is not a git repository: refused now, not when the first fork starts
      [{ isolation: 'worktree' }, /^--isolation: worktree needs the workspace in a git repository with a commit; /],
      [
        { check: 'test -e {path}' },
        /^check: \{path\} is not a field of the directives \(its fields: \{directive\}, \{file\}\)$/,
      ],
    ];
    for (const [input, message] of cases)
      expect(await refusal(input)).toMatchObject({
        // a flag's own refusal; the check is refused by the engine's option checker
        code: input.check === undefined ? 'INVALID_FLAG' : 'INVALID_OPTION',
        message: expect.stringMatching(message),
      });
    // through the command: bad input is exit 2, with the message
    const cli = await planCli(dir, '--grep', 'nowhere');
    expect([cli.code, cli.stderr]).toEqual([2, expect.stringMatching(/--grep: 4 file\(s\) match/)]);
  });

  it('--isolation worktree goes into the plan of a git repository; a bad mode is exit 2, naming the flag', async () => {
    const dir = repo();
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'base');
    const plan = planFromGlob({
      workspace: dir,
      files: 'src/*.ts',
      directive: 'rename fetchData to loadData in {file}',
      model: 'claude-opus-5-5',
      isolation: 'worktree',
    });
    expect((await plan).plan).toMatchObject({ isolation: 'worktree' });
    const bad = await planCli(dir, '--isolation', 'branch');
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/--isolation: expected none or worktree/)]);
  });
});

describe('forkcache run and resume --retry on a plan made from a glob', () => {
  it('names the forks that were not done, exits 1, and retries only those statuses', async () => {
    const dir = repo();
    const out = join(dir, 'plan.json');
    // c.ts's check passes only once the test allows it: its fork ends check_failed first
    const check = `! grep -qw fetchData {file} && { test {file} != src/c.ts || test -e allow-c; }`;
    const planned = await forkcache([
      'plan',
      ...['--workspace', dir, '--files', 'src/*.ts', '--grep', 'fetchData', '--out', out],
      ...['--directive', 'rename fetchData to loadData in {file}', '--check', check],
    ]);
    expect(planned.code).toBe(0);
    const plan = JSON.parse(ws(dir, 'plan.json')) as { directives: unknown[]; runDir?: string };
    plan.directives.push({ directive: 'translate src/other.ts to Rust', file: 'src/other.ts' }); // nothing can act on it
    plan.runDir = 'runs';
    writeFileSync(out, JSON.stringify(plan));

    const run = await forkcache(['run', out, '--json']);
    expect(run.code).toBe(1);
    const summary = lastJson(run.stdout);
    expect(summary.fork_results.map((f: { status: string }) => f.status)).toEqual([
      'completed',
      'completed',
      'check_failed',
      'not_done',
    ]);
    expect(summary.forks).toMatchObject({ total: 4, completed: 2, check_failed: 1, not_done: 1 });
    expect(summary.fork_results[3]).toMatchObject({
      directive: 'translate src/other.ts to Rust',
      fields: { file: 'src/other.ts' },
    });
    expect(run.stderr).toMatch(/2 of 4 fork\(s\) not done:/);
    expect(run.stderr).toMatch(/check_failed {2}fo\S+-f03: FORK_CHECK_FAILED: the check .* \(file src\/c\.ts\)/);
    expect(run.stderr).toMatch(
      /not_done {2}fo\S+-f04: FORK_NOT_DONE: the fork's report says Result: not done.* \(file src\/other\.ts\)/,
    );
    expect(run.stderr).toMatch(/retry them with: forkcache resume \/\S+ --retry all-not-done/);
    expect(ws(dir, 'src/a.ts') + ws(dir, 'src/b.ts') + ws(dir, 'src/c.ts')).not.toMatch(/\bfetchData\b/);
    const runDir = summary.run_dir as string;
    const turnsOf = (json: Record<string, any>): number[] => json.fork_results.map((f: { turns: number }) => f.turns);

    expect((await forkcache(['resume', runDir, '--retry', 'completed'])).stderr).toMatch(
      /--retry: completed forks never re-run/,
    );
    writeFileSync(join(dir, 'allow-c'), '');
    const retried = await forkcache(['resume', runDir, '--retry', 'check_failed', '--json']);
    const after = lastJson(retried.stdout);
    // the final status of every fork; only the check_failed one ran again
    expect(after.fork_results.map((f: { status: string }) => f.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'not_done',
    ]);
    const [a, b, c, d] = turnsOf(after);
    expect([a, b, d]).toEqual([turnsOf(summary)[0], turnsOf(summary)[1], turnsOf(summary)[3]]);
    expect(c).toBeGreaterThan(turnsOf(summary)[2]!);
    expect(retried.code).toBe(1); // the not_done fork was not asked for: still not done
    expect(retried.stderr).toMatch(/1 of 4 fork\(s\) not done:/);
  });
});
