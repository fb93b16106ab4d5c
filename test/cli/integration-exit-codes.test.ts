import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LEFT_OUT_EXIT_CODE, NOT_INTEGRATED_EXIT_CODE, NOTHING_MERGED_EXIT_CODE } from '../../src/cli/exit-codes.ts';
import { transcriptPath } from '../../src/core/run-dir/files.ts';
import { readTranscript } from '../../src/core/run-dir/transcript-reader.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { runDirOf, writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 42: `merge` exited 0 on a tree that did not build, and when nothing merged. With an
// integration check, `run`, `resume` and `merge` exit 0 only when every fork is integrated and
// the check passes; 4 when some are left out; 5 when none is integrated. The check here is a
// shell one (no file may say BROKEN), so the test needs no compiler.

const files = { 'a.txt': 'alpha one\n', 'b.txt': 'alpha two\n' };
const CHECK = '! grep -rl --exclude-dir=.forkcache-home BROKEN .';
const rename = (file: string) => ({ directive: `rename alpha to beta in ${file}`, file });
// a fork that breaks the check, and writes the same thing again on its fix-up turn
const breaker = { directive: 'run `echo BROKEN > bad.txt` and report' };

function plan(repo: string, directives: unknown[], integrationCheck = CHECK): string {
  return writePlan(repo, directives as never, {
    isolation: 'worktree',
    allow: ['read_file', 'edit_file', 'write_file', 'bash'],
    sandbox: 'none',
    integrationCheck,
    integrationRounds: 1,
  });
}

describe('exit codes that tell the truth (issue 42)', () => {
  it('run exits 0 when every fork is integrated and the check passes; merge then exits 0 too', async () => {
    const repo = repoWith(files);
    const planPath = plan(repo, [rename('a.txt'), rename('b.txt')]);
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(0);
    const json = lastJson(ran.stdout);
    expect(json['integration']).toMatchObject({ integrated: 2, left_out: 0, passed: true, check_runs: 1 });
    expect(json['fork_results'].map((f: { status: string }) => f.status)).toEqual(['integrated', 'integrated']);
    const dir = runDirOf(planPath);
    const branch = json['integration']['repos'][0]['branch'];
    expect(git(repo, 'show', `${branch}:a.txt`)).toBe('beta one');
    // the user's checkout did not move: the integration has a worktree of its own
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('alpha one\n');
    const merged = await forkcache(['merge', dir, '--json']);
    expect(merged.code).toBe(0);
    expect(lastJson(merged.stdout)['counts']).toMatchObject({ forks: 2, merged: 2, left_out: 0, check_passed: true });
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('beta two\n');
  });

  it('run, resume and merge exit 4 when a fork is left out: listed with the output that implicated it and a retry plan', async () => {
    const repo = repoWith(files);
    const planPath = plan(repo, [rename('a.txt'), breaker, rename('b.txt')]);
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(LEFT_OUT_EXIT_CODE);
    const json = lastJson(ran.stdout);
    expect(json['forks']).toMatchObject({ integrated: 2, left_out: 1 });
    const integration = json['integration'];
    expect(integration).toMatchObject({ integrated: 2, left_out: 1, passed: true, fixup_rounds: 1 });
    const out = integration['repos'][0]['forks'].find((f: { status: string }) => f.status === 'left_out');
    expect(out).toMatchObject({ fork_id: expect.stringMatching(/-f02$/), files: ['bad.txt'], fixups: 1 });
    expect(out['output']).toContain('bad.txt');
    expect(integration['retry_plan']).toMatch(/retry-plan\.json$/);
    const retry = JSON.parse(readFileSync(integration['retry_plan'], 'utf8'));
    expect(retry.directives).toEqual([{ directive: breaker.directive }]);
    expect(retry.integrationCheck).toBe(CHECK);

    const dir = runDirOf(planPath);
    // the fix-up turn continued the fork's conversation: its first request read the fork's
    // whole history (everything its last request sent) from the cache, not just the shared prefix
    const transcript = readTranscript(transcriptPath(dir, out['fork_id']));
    const at = transcript.turns.findIndex((t) => t.prompt?.reason === 'fixup');
    expect(at).toBeGreaterThan(0);
    const before = transcript.turns[at]!.request.usage;
    const fixup = transcript.turns[at + 1]!.request.usage;
    const sent = before.cache_read_input_tokens + before.cache_creation_input_tokens + before.input_tokens;
    expect(fixup.cache_read_input_tokens).toBeGreaterThanOrEqual(sent);
    expect(fixup.cache_read_input_tokens).toBeGreaterThan(transcript.turns[0]!.request.usage.cache_read_input_tokens);

    const status = await forkcache(['status', dir, '--json']);
    expect(lastJson(status.stdout)['forks'].map((f: { status: string }) => f.status)).toEqual([
      'integrated',
      'left_out',
      'integrated',
    ]);
    const text = await forkcache(['status', dir]);
    expect(text.stdout).toMatch(/not done {2}f02 {2}left_out/);
    expect(text.stdout).toMatch(/: 3 forks, 2 integrated, 1 left out, \$/);

    const resumed = await forkcache(['resume', dir, '--json']);
    expect(resumed.code).toBe(LEFT_OUT_EXIT_CODE);
    expect(lastJson(resumed.stdout)['integration']).toMatchObject({ integrated: 2, left_out: 1 });

    const merged = await forkcache(['merge', dir, '--json']);
    expect(merged.code).toBe(LEFT_OUT_EXIT_CODE);
    expect(lastJson(merged.stdout)['counts']).toMatchObject({ forks: 3, merged: 2, left_out: 1, check_passed: true });
    expect(existsSync(join(repo, 'bad.txt'))).toBe(false);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('beta one\n');
  });

  it('run and merge exit 5 when nothing is integrated', async () => {
    const repo = repoWith(files);
    const planPath = plan(repo, [breaker]);
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(NOTHING_MERGED_EXIT_CODE);
    expect(lastJson(ran.stdout)['integration']).toMatchObject({ integrated: 0, left_out: 1 });
    const merged = await forkcache(['merge', runDirOf(planPath), '--json']);
    expect(merged.code).toBe(NOTHING_MERGED_EXIT_CODE);
    expect(lastJson(merged.stdout)['counts']).toMatchObject({ merged: 0, left_out: 1 });
  });

  it('a check that cannot run (a missing program) is no red base: not integrated, exit 6, each fork keeps its status, no fix-up', async () => {
    const repo = repoWith(files);
    const planPath = plan(repo, [rename('a.txt'), rename('b.txt')], 'no-such-checker --all');
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(NOT_INTEGRATED_EXIT_CODE);
    const json = lastJson(ran.stdout);
    expect(json['integration']).toMatchObject({
      integrated: 0,
      left_out: 0,
      passed: false,
      blocked: true,
      fixup_rounds: 0,
    });
    expect(json['integration']['repos'][0]['blocked']).toMatch(
      /^the check cannot run \(exit 127\): .*no-such-checker: command not found/s,
    );
    expect(json['integration']['repos'][0]['forks']).toEqual([]);
    expect(json['fork_results'].map((f: { status: string }) => f.status)).toEqual(['completed', 'completed']);
    expect(json['integration']['retry_plan']).toBeNull();
    const text = await forkcache(['run', plan(repo, [rename('a.txt')], 'no-such-checker --all')]);
    expect(text.code).toBe(NOT_INTEGRATED_EXIT_CODE);
    expect(text.stdout).toContain('integration: NOT DONE, `no-such-checker --all`: the check cannot run (exit 127)');
    const merged = await forkcache(['merge', runDirOf(planPath), '--json']);
    expect(merged.code).toBe(NOT_INTEGRATED_EXIT_CODE);
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('alpha one\n');
  });

  it('a base that fails the check without any fork: not integrated, exit 6; once the base passes, merge integrates again, exit 0', async () => {
    const repo = repoWith(files);
    const planPath = plan(repo, [rename('a.txt'), rename('b.txt')], 'test -f ok.txt');
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(NOT_INTEGRATED_EXIT_CODE);
    const json = lastJson(ran.stdout);
    expect(json['integration']).toMatchObject({ integrated: 0, left_out: 0, blocked: true, check_runs: 2 });
    expect(json['integration']['repos'][0]['blocked']).toMatch(/^the base fails the check without any fork \(exit 1\)/);
    expect(json['fork_results'].map((f: { status: string }) => f.status)).toEqual(['completed', 'completed']);
    // the user mends the base; merge of the run integrates again instead of reading the old record
    writeFileSync(join(repo, 'ok.txt'), 'ok\n');
    git(repo, 'add', 'ok.txt');
    git(repo, 'commit', '-qm', 'the base passes');
    const merged = await forkcache(['merge', runDirOf(planPath), '--json']);
    expect(merged.code).toBe(0);
    expect(lastJson(merged.stdout)['counts']).toMatchObject({ merged: 2, left_out: 0, check_passed: true });
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('beta two\n');
  });

  it('merge --integration-check integrates a run that had none, without fix-ups', async () => {
    const repo = repoWith(files);
    const planPath = writePlan(repo, [rename('a.txt'), breaker] as never, {
      isolation: 'worktree',
      allow: ['read_file', 'edit_file', 'write_file', 'bash'],
      sandbox: 'none',
    });
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(0);
    const merged = await forkcache(['merge', runDirOf(planPath), '--integration-check', CHECK, '--json']);
    expect(merged.code).toBe(LEFT_OUT_EXIT_CODE);
    const json = lastJson(merged.stdout);
    expect(json['integration']).toMatchObject({ integrated: 1, left_out: 1, fixup_rounds: 0 });
    expect(existsSync(join(repo, 'bad.txt'))).toBe(false);
  });
});

describe('plan --integration-check (issue 42)', () => {
  it('writes integrationCheck and checkLocal into the plan; without worktrees it is bad input naming the flag', async () => {
    const repo = repoWith(files);
    const out = join(repo, 'plan.json');
    const args = ['plan', '--workspace', repo, '--files', '*.txt', '--directive', 'rename alpha to beta in {file}'];
    const written = await forkcache([
      ...args,
      '--isolation',
      'worktree',
      '--integration-check',
      CHECK,
      '--check-local',
      '--out',
      out,
    ]);
    expect(written.code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ integrationCheck: CHECK, checkLocal: true });
    const refused = await forkcache([...args, '--integration-check', CHECK]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--integration-check: needs --isolation worktree');
  });
});
