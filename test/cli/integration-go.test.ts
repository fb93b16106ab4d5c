import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEFT_OUT_EXIT_CODE } from '../../src/cli/exit-codes.ts';
import { transcriptPath } from '../../src/core/run-dir/files.ts';
import { readTranscript } from '../../src/core/run-dir/transcript-reader.ts';
import { git, repoWith } from '../core/tools/git-fixture.ts';
import { runDirOf, writePlan } from './review-fixture.ts';
import { forkcache, lastJson } from './run-cli.ts';

// Issue 42: a rename across the files of one Go package cannot pass a per-fork `go build`
// (each worktree holds its own file's half of the rename), and forkcache stopped at the fork.
// Here the per-fork check is `local` (advisory) and the integration check builds and vets the
// merged package. Debian's golang-go and golang-github-spf13-pflag-dev (.ci/run installs both).

const PFLAG = '/usr/share/gocode/src/github.com/spf13/pflag';
const hasGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const why = !hasGo
  ? 'skipped: no `go` on PATH (Debian golang-go)'
  : !existsSync(PFLAG)
    ? `skipped: no ${PFLAG} (Debian golang-github-spf13-pflag-dev)`
    : 'go and pflag present';

// one build cache for every run of the suite (a cold one rebuilds the standard library); no network
// one Go build cache per user: a folder another user made first (root's, in CI before `nobody`'s
// run) is not writable (issue 47)
const GO_ENV = `export GOCACHE=${join(tmpdir(), `forkcache-test-gocache-${process.getuid?.() ?? 'user'}`)} GOFLAGS=-mod=mod GOPROXY=off;`;
const GO_CHECK = `${GO_ENV} go build ./... && go vet ./...`;

/** The pflag package as a module of its own, with a file that holds every slice value to the interface. */
function pflagModule(): { repo: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'fc-pflag-'));
  const sources = readdirSync(PFLAG).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'));
  for (const file of [...sources, 'go.mod']) copyFileSync(join(PFLAG, file), join(dir, file));
  const texts = new Map(sources.map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
  const types = [...texts.values()].flatMap((text) =>
    [...text.matchAll(/^func \(s \*([a-zA-Z0-9]+)\) GetSlice\(/gm)].map((m) => m[1]!),
  );
  // without it, half a rename of the interface's method still compiles: with it, no half does
  writeFileSync(
    join(dir, 'slice_values.go'),
    `package pflag\n\nvar _ = []SliceValue{${types.map((t) => `(*${t})(nil)`).join(', ')}}\n`,
  );
  const files = sources.filter((f) => /\bGetSlice\b/.test(texts.get(f)!));
  const all = [...sources, 'go.mod', 'slice_values.go'];
  const repo = repoWith(Object.fromEntries(all.map((f) => [f, readFileSync(join(dir, f), 'utf8')])));
  return { repo, files };
}

describe.skipIf(!hasGo || !existsSync(PFLAG))(`the integration step on Go (${why})`, () => {
  it('a rename across a package of pflag: every per-fork build fails, every fork is integrated, the branch builds, exit 0', async () => {
    const { repo, files } = pflagModule();
    expect(files.length).toBeGreaterThanOrEqual(10);
    const planPath = writePlan(
      repo,
      files.map((file) => ({ directive: `rename GetSlice to SliceItems in ${file}`, file })) as never,
      {
        isolation: 'worktree',
        sandbox: 'none',
        check: `${GO_ENV} go build ./...`,
        checkLocal: true,
        integrationCheck: GO_CHECK,
      },
    );
    const ran = await forkcache(['run', planPath, '--json']);
    const json = lastJson(ran.stdout);
    // alone, no fork's worktree builds: its half of the rename does not implement the interface
    expect(json['fork_results'].map((f: { end_status: string }) => f.end_status)).toEqual(
      files.map(() => 'check_failed'),
    );
    expect(json['fork_results'].map((f: { status: string }) => f.status)).toEqual(files.map(() => 'integrated'));
    expect(json['integration']).toMatchObject({ integrated: files.length, left_out: 0, passed: true, check_runs: 1 });
    expect(ran.code).toBe(0);
    // an integrated fork is done: its failed local check is advisory, nothing to retry
    expect(ran.stderr).not.toMatch(/not done|--retry/);
    const branch = json['integration']['repos'][0]['branch'];
    expect(git(repo, 'show', `${branch}:flag.go`)).toContain('SliceItems() []string');
    // git grep exits 1 when nothing matches: no GetSlice is left on the branch
    expect(() => git(repo, 'grep', '-q', '-w', 'GetSlice', branch)).toThrow();
  });

  it('a type error and an over-rename: the over-rename is fixed by its fix-up turn, the type error is left out, exit 4', async () => {
    const repo = repoWith({
      'go.mod': 'module example.com/demo\n\ngo 1.19\n',
      'names.go': 'package demo\n\nfunc oldName() string { return "x" }\n',
      'use.go': 'package demo\n\nfunc Use() string { return oldName() + oldName() }\n',
      'cmd.go':
        'package demo\n\nimport "os/exec"\n\nfunc Command(name string) *exec.Cmd { return exec.Command(name) }\n\nvar _ = Command\n',
    });
    const typeError = 'run `printf \'package demo\\n\\nvar Broken int = "x"\\n\' > broken.go` and report';
    const planPath = writePlan(
      repo,
      [
        { directive: 'rename oldName to newName in names.go', file: 'names.go' },
        { directive: 'rename oldName to newName in use.go', file: 'use.go' },
        // a whole-word rename takes exec.Command with it: `undefined: exec.RunCommand`
        { directive: 'rename Command to RunCommand in cmd.go', file: 'cmd.go' },
        { directive: typeError },
      ] as never,
      {
        isolation: 'worktree',
        sandbox: 'none',
        allow: ['read_file', 'edit_file', 'write_file', 'bash'],
        integrationCheck: GO_CHECK,
        integrationRounds: 2,
      },
    );
    const ran = await forkcache(['run', planPath, '--json']);
    expect(ran.code).toBe(LEFT_OUT_EXIT_CODE);
    const json = lastJson(ran.stdout);
    const integration = json['integration'];
    expect(integration).toMatchObject({ integrated: 3, left_out: 1, passed: true, fixup_rounds: 2 });
    const forks = integration['repos'][0]['forks'] as Array<Record<string, any>>;
    expect(forks.map((f) => f['status'])).toEqual(['integrated', 'integrated', 'integrated', 'left_out']);
    expect(forks[2]).toMatchObject({ fixups: 1 });
    expect(forks[3]).toMatchObject({ fixups: 2, files: ['broken.go'] });
    expect(forks[3]!['output']).toMatch(/broken\.go:3:\d+: cannot use "x"/);
    expect(integration['retry_plan']).toMatch(/retry-plan\.json$/);
    expect(ran.stderr).toContain('fix-up round 1 for f03, f04');
    // a line for each fork given a fix-up turn, none for the forks the resume only ended again
    expect(ran.stderr).toMatch(/ {2}fix-up \S+-f03: /);
    expect(ran.stderr).not.toMatch(/ {2}fix-up \S+-f01: /);

    const branch = integration['repos'][0]['branch'];
    expect(git(repo, 'show', `${branch}:cmd.go`)).toContain(
      'func RunCommand(name string) *exec.Cmd { return exec.Command(name) }',
    );
    expect(git(repo, 'show', `${branch}:use.go`)).toContain('newName() + newName()');
    expect(git(repo, 'ls-tree', '--name-only', branch)).not.toContain('broken.go');
    // the integrated branch builds and vets, checked here outside forkcache too
    const tree = mkdtempSync(join(tmpdir(), 'fc-go-tree-'));
    git(repo, 'worktree', 'add', '--quiet', '--detach', tree, branch);
    execFileSync('sh', ['-c', GO_CHECK], { cwd: tree });

    // the fix-up turn's first request read the fork's own history from the cache
    const dir = runDirOf(planPath);
    const transcript = readTranscript(transcriptPath(dir, forks[2]!['fork_id']));
    const at = transcript.turns.findIndex((t) => t.prompt?.reason === 'fixup');
    expect(at).toBeGreaterThan(0);
    const before = transcript.turns[at]!.request.usage;
    const sent = before.cache_read_input_tokens + before.cache_creation_input_tokens + before.input_tokens;
    expect(transcript.turns[at + 1]!.request.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(sent);
  });
});
