import { resolve } from 'node:path';
import { type CodeWithData, ForkcacheError } from '../../util/errors.ts';
import {
  driverOverrides,
  execGit,
  FORKCACHE_IDENT,
  gitEnv,
  type GitResult,
  type Ident,
  NEUTRAL_CONFIG,
} from './git.ts';
import { checkWorktreeLink, type WorktreeLink } from './worktree-link.ts';

type Config = ReadonlyArray<readonly [string, string]>;

interface RunOptions {
  ok?: readonly number[];
  /** Commit as this identity (default: forkcache's own). */
  ident?: Ident;
  input?: string;
}

/** The configuration overrides for a git dir: the fixed ones, then its own drivers turned off. */
async function overridesFor(cwd: string, extra: Record<string, string>): Promise<Config> {
  const { stdout } = await execGit(['config', '--list', '--name-only', '-z'], {
    cwd,
    env: gitEnv(NEUTRAL_CONFIG, extra),
    ok: [1], // no config at all
  });
  return [...NEUTRAL_CONFIG, ...driverOverrides(stdout)];
}

/**
 * git in a repository forkcache works with: the user's (for worktrees, diff, merge, clean),
 * through the hardened runner (git.ts). `open` finds the repository of a directory.
 */
export class HostGit {
  readonly top: string;
  /** The common git dir (absolute): where branches, objects and `worktrees/` live. */
  readonly commonDir: string;
  readonly #config: Config;

  private constructor(top: string, commonDir: string, config: Config) {
    this.top = top;
    this.commonDir = commonDir;
    this.#config = config;
  }

  /** The repository holding `dir`, or `code` saying it is not in one with a commit. */
  static async open(dir: string, code: CodeWithData<{ path: string }>, what = dir): Promise<HostGit> {
    let top: string;
    let common: string;
    try {
      const env = gitEnv(NEUTRAL_CONFIG);
      const { stdout } = await execGit(
        ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir', '--verify', 'HEAD'],
        { cwd: dir, env },
      );
      [top, common] = stdout.trim().split('\n') as [string, string];
    } catch (cause) {
      throw new ForkcacheError(code, `${what} is not in a git repository with a commit`, {
        cause,
        data: { path: dir },
      });
    }
    return new HostGit(top, resolve(top, common), await overridesFor(top, {}));
  }

  run(args: readonly string[], options: RunOptions = {}): Promise<GitResult> {
    return execGit(args, {
      cwd: this.top,
      env: gitEnv(this.#config, {}, options.ident),
      ...(options.ok ? { ok: options.ok } : {}),
      ...(options.input === undefined ? {} : { input: options.input }),
    });
  }

  async out(args: readonly string[]): Promise<string> {
    return (await this.run(args)).stdout.trim();
  }

  /** The commit a ref names, or undefined when there is none. */
  async commitOf(ref: string): Promise<string | undefined> {
    const { stdout, code } = await this.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { ok: [1] });
    return code === 0 ? stdout.trim() : undefined;
  }

  /**
   * The branches under `refs/heads/<prefix>` and their commits, in one call (a run has hundreds:
   * a git process per branch costs seconds on a loaded machine). `contains`/`merged` filter as
   * `git for-each-ref` does.
   */
  async branches(prefix: string, filter: { contains?: string; merged?: string } = {}): Promise<Map<string, string>> {
    const args = ['for-each-ref', '--format=%(objectname) %(refname:lstrip=2)'];
    if (filter.contains) args.push(`--contains=${filter.contains}`);
    if (filter.merged) args.push(`--merged=${filter.merged}`);
    const lines = (await this.out([...args, `refs/heads/${prefix}`])).split('\n').filter(Boolean);
    return new Map(lines.map((line) => [line.slice(line.indexOf(' ') + 1), line.slice(0, line.indexOf(' '))]));
  }

  /** Whether `ancestor` is `commit` or one of its ancestors. */
  async isAncestor(ancestor: string, commit: string): Promise<boolean> {
    return (await this.run(['merge-base', '--is-ancestor', ancestor, commit], { ok: [1] })).code === 0;
  }

  /** git inside the fork worktree at `path`, once its link is checked (`checkWorktreeLink`). */
  async worktree(path: string, expected?: WorktreeLink): Promise<WorktreeGit> {
    const link = checkWorktreeLink(path, this.commonDir, expected);
    const extra = { GIT_DIR: link.gitDir, GIT_WORK_TREE: link.path };
    return new WorktreeGit(link, this.commonDir, await overridesFor(link.path, extra));
  }

  /** The user's own identity from their configuration (read only: reading config runs nothing). */
  async userIdent(): Promise<Ident> {
    const home = process.env['HOME'];
    const env: Record<string, string> = { ...gitEnv(NEUTRAL_CONFIG), ...(home ? { HOME: home } : {}) };
    delete env['GIT_CONFIG_GLOBAL'];
    const get = async (key: string): Promise<string> =>
      (await execGit(['config', '--get', key], { cwd: this.top, env, ok: [1] })).stdout.trim();
    const [name, email] = await Promise.all([get('user.name'), get('user.email')]);
    return name && email ? { name, email } : FORKCACHE_IDENT;
  }
}

/**
 * git in one fork's worktree: GIT_DIR and GIT_WORK_TREE set to the link forkcache created (git
 * never reads the fork's `.git`), and the link checked again before every command, so a
 * tampered worktree is refused with GIT_WORKTREE_TAMPERED and nothing runs.
 */
export class WorktreeGit {
  readonly link: WorktreeLink;
  readonly #commonDir: string;
  readonly #config: Config;

  constructor(link: WorktreeLink, commonDir: string, config: Config) {
    this.link = link;
    this.#commonDir = commonDir;
    this.#config = config;
  }

  run(args: readonly string[], options: RunOptions = {}): Promise<GitResult> {
    checkWorktreeLink(this.link.path, this.#commonDir, this.link);
    return execGit(args, {
      cwd: this.link.path,
      env: gitEnv(this.#config, { GIT_DIR: this.link.gitDir, GIT_WORK_TREE: this.link.path }, options.ident),
      ...(options.ok ? { ok: options.ok } : {}),
      ...(options.input === undefined ? {} : { input: options.input }),
    });
  }

  async out(args: readonly string[]): Promise<string> {
    return (await this.run(args)).stdout.trim();
  }
}
