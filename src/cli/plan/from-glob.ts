import { open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { RE2JS } from 're2js';
import { ForkcacheError } from '../../core/util/errors.ts';
import { validateDirective } from '../../core/fork/directive.ts';
import { substituteCheck } from '../../core/tools/checks/command.ts';
import { parserAvailable } from '../../core/tools/checks/file-check.ts';
import { HostGit } from '../../core/tools/git/host-git.ts';
import { parseGlob } from '../../core/tools/files/glob-match.ts';
import { BINARY_SNIFF_BYTES } from '../../core/tools/limits.ts';
import { byCodeUnit, walk } from '../../core/tools/jail/walk.ts';
import { openRepos, repoNameSchema } from '../../core/engine/fan-out/repos.ts';
import { planParent } from './parent.ts';
import { commonRoot, expandRepos } from './repo-globs.ts';

/** What `forkcache plan` is given. */
export interface GlobPlanInput {
  /** The repository (one); a plan over several names `repos` instead. */
  workspace?: string | undefined;
  /** `--repos`: folders, comma lists or globs of folders (`DIR/*`): a plan over several repositories. */
  repos?: readonly string[] | undefined;
  files: string;
  grep?: string | undefined;
  directive: string;
  check?: string | undefined;
  checkRetries?: number | undefined;
  /** Every fork must change its file (the plan's `requireChange`). */
  requireChange?: boolean | undefined;
  /** `worktree`: each fork in its own git worktree (checked now: the workspace must be a repository). */
  isolation?: 'none' | 'worktree' | undefined;
  sparse?: boolean | undefined;
  model: string;
  /** Where the plan will be written: its `workspace` is then relative to that file's directory. */
  out?: string | undefined;
}

const IDENTIFIER = '[A-Za-z_][A-Za-z0-9_]*';
const RENAME = new RegExp(`^\\s*rename\\s+(${IDENTIFIER})\\s+to\\s+(${IDENTIFIER})\\s+in\\s+\\{file\\}\\s*$`, 'i');

/**
 * The check of a rename directive (`rename OLD to NEW in {file}`). With the parser package
 * (`parser`): the file still parses and OLD is none of its identifiers, while its strings and
 * comments may keep the word (`forkcache check-file`, src/core/tools/checks/file-check.ts; issue 42: a word
 * check pushed models to rename `exec.Command` and user-visible strings). Without it, the word
 * check plans wrote before: the old name is gone and the new one is there. Undefined for any
 * other directive (the user gives `--check`).
 */
function renameCheck(directive: string, parser = true): string | undefined {
  const m = RENAME.exec(directive);
  if (!m) return undefined;
  return parser
    ? `forkcache check-file --parses --no-identifier ${m[1]!} {file}`
    : `! grep -qw ${m[1]!} {file} && grep -qw ${m[2]!} {file}`;
}

/** The check `plan` writes for a rename: the parser check when the parser package loads here. */
async function writtenRenameCheck(directive: string): Promise<string | undefined> {
  return RENAME.test(directive) ? renameCheck(directive, await parserAvailable()) : undefined;
}

/** Directories a glob never enters unless it names them: version control, dependencies, forkcache's runs. */
const SKIPPED_DIRS = ['.git', 'node_modules', '.forkcache'];
/** Enough for any repository a fan-out is run on; the walk says so if it stops. */
const MAX_ENTRIES = 2_000_000;

const bad = (flag: string, message: string): ForkcacheError =>
  new ForkcacheError('INVALID_FLAG', `${flag}: ${message}`, { data: { field: flag } });

/** The workspace's files matching the glob, sorted, workspace-relative; never through a symlink. */
async function globFiles(root: string, pattern: string): Promise<string[]> {
  let parsed: ReturnType<typeof parseGlob>;
  try {
    parsed = parseGlob(pattern);
  } catch (err) {
    throw bad('--files', (err as Error).message);
  }
  const start = path.join(root, parsed.base);
  if (!(await stat(start).catch(() => undefined))?.isDirectory()) return [];
  // the user's own walk on the host: nothing below the workspace is off limits to a plan
  const scope = { root, refusal: () => undefined };
  const { entries, truncated } = await walk(start, parsed.base, MAX_ENTRIES, undefined, scope);
  if (truncated)
    throw bad(
      '--files',
      `more than ${MAX_ENTRIES} entries under ${parsed.base || '.'}: start the glob with a directory`,
    );
  const named = (dir: string): boolean => pattern.split('/').includes(dir);
  const skipped = SKIPPED_DIRS.filter((d) => !named(d));
  return entries
    .filter((e) => e.kind === 'file' && parsed.matcher.test(e.relative))
    .filter((e) => !e.relative.split('/').some((segment) => skipped.includes(segment)))
    .map((e) => e.relative)
    .sort(byCodeUnit);
}

/** Whether some line of a (text) file matches: the grep tool's rule, RE2 and line by line. */
async function fileMatches(file: string, re: RE2JS): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const text = await handle.readFile();
    if (text.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return false;
    return text
      .toString('utf8')
      .split(/\r?\n/)
      .some((line) => re.matcher(line).find());
  } finally {
    await handle.close();
  }
}

/** The files of one root the plan's glob and regex keep; none is bad input, naming the flag that found none. */
async function matchingFiles(
  root: string,
  shown: string,
  input: Pick<GlobPlanInput, 'files' | 'grep'>,
  re: RE2JS | undefined,
): Promise<string[]> {
  const globbed = await globFiles(root, input.files);
  const files: string[] = [];
  for (const file of globbed) if (re === undefined || (await fileMatches(path.join(root, file), re))) files.push(file);
  if (files.length === 0) {
    const why =
      globbed.length === 0
        ? `no file under ${shown} matches ${input.files}`
        : `${globbed.length} file(s) match ${input.files}, and none has a line matching ${input.grep}`;
    throw bad(input.grep === undefined ? '--files' : '--grep', why);
  }
  return files;
}

/** `--grep`'s regular expression, or bad input naming it. */
function compileGrep(grep: string | undefined): RE2JS | undefined {
  if (grep === undefined) return undefined;
  try {
    return RE2JS.compile(grep);
  } catch (err) {
    throw bad(
      '--grep',
      `invalid regular expression (RE2 syntax: no lookaround, no backreferences): ${(err as Error).message}`,
    );
  }
}

interface GlobPlan {
  plan: Record<string, unknown>;
  /** Every fork's file (repository-relative in a plan over several). */
  files: string[];
  writtenCheck?: string;
  /** A plan over several repositories: the forks of each, by name. */
  perRepo?: Array<{ repo: string; files: number }>;
}

/**
 * `forkcache plan --repos`: the glob (and regex) applied inside each repository, one directive
 * per file with its `file` (relative to that repository) and `repo` (its name in the plan), the
 * repositories in the order given. The plan's workspace is the folder holding them all; its
 * isolation is worktree (each fork's branch lives in its own repository). A repository where no
 * file matches gets no fork; none matching anywhere is bad input.
 */
async function planFromRepos(input: GlobPlanInput, values: readonly string[]): Promise<GlobPlan> {
  if (input.isolation === 'none')
    throw bad(
      '--isolation',
      'a plan over several repositories runs in worktrees (each fork on a branch of its own repository)',
    );
  if (!input.directive.includes('{file}'))
    throw bad('--directive', 'put {file} where the file goes: each fork is given one file');
  const re = compileGrep(input.grep);
  const { root, names } = commonRoot(expandRepos(values));
  // the plan names each by its folder under the common root: a name the plan could not hold is said now
  for (const name of names) {
    const checked = repoNameSchema.safeParse(name);
    if (!checked.success) throw bad('--repos', `${name}: ${checked.error.issues[0]!.message}`);
  }
  await openRepos(root, names).catch((err: unknown) => {
    // the engine's rule, said about the flag: `repos[1]: web is not a git work tree` …
    if (!(err instanceof ForkcacheError)) throw err;
    throw bad('--repos', err.message);
  });
  const directives: Array<{ directive: string; file: string; repo: string }> = [];
  const perRepo: Array<{ repo: string; files: number }> = [];
  let firstMiss: ForkcacheError | undefined;
  for (const repo of names) {
    const files = await matchingFiles(path.join(root, repo), repo, input, re).catch((err: unknown) => {
      if (!(err instanceof ForkcacheError) || err.data?.['field'] === undefined || err.message.includes('more than'))
        throw err;
      firstMiss ??= err;
      return [];
    });
    perRepo.push({ repo, files: files.length });
    for (const file of files)
      directives.push({
        directive: validateDirective(input.directive.replaceAll('{file}', file).replaceAll('{repo}', repo), {
          field: `directives[${directives.length}]`,
          rejectTag: true,
        }),
        file,
        repo,
      });
  }
  if (directives.length === 0) throw firstMiss ?? bad('--files', `no file matches ${input.files} in any repository`);
  if (input.check !== undefined) substituteCheck(input.check, { ...directives[0]! }, 'the directives');
  const check = input.check ?? (await writtenRenameCheck(input.directive));
  const out = input.out === undefined ? undefined : path.dirname(path.resolve(input.out));
  const plan = {
    parent: planParent(input.model, {
      repository: names.join(', '),
      repositories: names.length,
      task: input.directive.replaceAll('{file}', '<file>').replaceAll('{repo}', '<repo>'),
      files: directives.length,
      glob: input.files,
      grep: input.grep,
    }),
    workspace: out === undefined ? root : path.relative(out, root) || '.',
    repos: names,
    directives,
    ...(check === undefined ? {} : { check }),
    ...(input.requireChange === true ? { requireChange: true } : {}),
    ...(input.checkRetries === undefined ? {} : { checkRetries: input.checkRetries }),
    isolation: 'worktree',
    ...(input.sparse ? { sparseWorktrees: true } : {}),
  };
  return {
    plan,
    files: directives.map((d) => d.file),
    perRepo,
    ...(input.check === undefined && check !== undefined ? { writtenCheck: check } : {}),
  };
}

/**
 * A plan from a glob: one directive per matching file (sorted, `{file}` substituted), each
 * with its `file` field, a default parent (src/cli/plan/parent.ts) and the check. Bad input
 * names the flag: a missing workspace, a bad glob or regex, a template without `{file}`, a
 * check placeholder no directive has, and no file matched at all.
 */
export async function planFromGlob(input: GlobPlanInput): Promise<GlobPlan> {
  if (input.repos !== undefined) {
    if (input.workspace !== undefined)
      throw bad('--workspace', 'give either --workspace (one repository) or --repos (several), not both');
    return planFromRepos(input, input.repos);
  }
  if (input.workspace === undefined)
    throw bad('--workspace', 'required: the repository the forks work in (or --repos for several)');
  const root = await realpath(input.workspace).catch(() => undefined);
  if (root === undefined || !(await stat(root)).isDirectory())
    throw bad('--workspace', `${input.workspace} ${root === undefined ? 'does not exist' : 'is not a directory'}`);
  if (!input.directive.includes('{file}'))
    throw bad('--directive', 'put {file} where the file goes: each fork is given one file');
  const re = compileGrep(input.grep);
  if (input.sparse && input.isolation !== 'worktree') throw bad('--sparse', 'needs --isolation worktree');
  if (input.isolation === 'worktree')
    await HostGit.open(root, 'INVALID_FLAG').catch(() => {
      throw bad(
        '--isolation',
        `worktree needs the workspace in a git repository with a commit; ${input.workspace} is not`,
      );
    });
  const files = await matchingFiles(root, input.workspace, input, re);
  const directives = files.map((file, i) => ({
    directive: validateDirective(input.directive.replaceAll('{file}', file), {
      field: `directives[${i}]`,
      rejectTag: true,
    }),
    file,
  }));
  // a check placeholder no directive has is found now, not when the run starts
  if (input.check !== undefined) substituteCheck(input.check, { ...directives[0]! }, 'the directives');
  const check = input.check ?? (await writtenRenameCheck(input.directive));
  const out = input.out === undefined ? undefined : path.dirname(path.resolve(input.out));
  const plan = {
    parent: planParent(input.model, {
      repository: path.basename(root),
      task: input.directive.replaceAll('{file}', '<file>'),
      files: files.length,
      glob: input.files,
      grep: input.grep,
    }),
    workspace: out === undefined ? root : path.relative(out, root) || '.',
    directives,
    ...(check === undefined ? {} : { check }),
    ...(input.requireChange === true ? { requireChange: true } : {}),
    ...(input.checkRetries === undefined ? {} : { checkRetries: input.checkRetries }),
    ...(input.isolation === undefined ? {} : { isolation: input.isolation }),
    ...(input.sparse ? { sparseWorktrees: true } : {}),
  };
  return { plan, files, ...(input.check === undefined && check !== undefined ? { writtenCheck: check } : {}) };
}
