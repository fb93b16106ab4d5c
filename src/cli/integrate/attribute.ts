import type { ForkReview } from '../review/run-forks.ts';

/*
 * Which forks a failed repository-wide check points at. Compilers, type checkers and test
 * runners name the files they fail on (`./root.go:12:3:`, `src/a.ts(3,5):`, `File ".../x.py"`):
 * each path of the output that a fork changed implicates that fork. Where the output names
 * no changed file, `bisect` finds the fork by merging the forks one prefix at a time.
 */

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `path` as the output may write it: on its own, after `./`, a `/` (an absolute path) or a quote; then `:`, `(` (tsc), a quote or a space. */
function pathPattern(path: string): RegExp {
  return new RegExp(`(?:^|[\\s'"(\\[/=:])(?:\\./)?${escape(path)}(?=$|[\\s'"():\\],;])`, 'm');
}

/** For each fork whose changed files the output names: those files (forks in plan order). */
export function implicatedForks(
  output: string,
  forks: readonly ForkReview[],
): Array<{ fork: ForkReview; files: string[] }> {
  const out: Array<{ fork: ForkReview; files: string[] }> = [];
  for (const fork of forks) {
    const files = fork.filesChanged.filter((file) => pathPattern(file).test(output));
    if (files.length > 0) out.push({ fork, files });
  }
  return out;
}

/** The lines of `output` that name one of `files`, with the line after each (a compiler's detail); the whole output when none does. */
export function outputFor(output: string, files: readonly string[]): string {
  if (files.length === 0) return output;
  const lines = output.split('\n');
  const patterns = files.map(pathPattern);
  const keep = new Set<number>();
  lines.forEach((line, i) => {
    if (patterns.some((p) => p.test(line))) {
      keep.add(i);
      if (i + 1 < lines.length && /^\s/.test(lines[i + 1]!)) keep.add(i + 1);
    }
  });
  return keep.size === 0 ? output : [...keep].map((i) => lines[i]).join('\n');
}

/**
 * The fork whose merge turns the check red: the shortest prefix of `forks` (plan order) that
 * fails ends with it. `fails(n)` checks the first n forks merged; all n = `forks.length` are
 * known to fail. Undefined when the check fails with no fork at all (the base is red).
 * About log2(n) checks, plus one for the base when the first fork is the one (none when
 * `basePasses`: the caller checked it).
 */
export async function bisect<T>(
  forks: readonly T[],
  fails: (n: number) => Promise<boolean>,
  basePasses = false,
): Promise<T | undefined> {
  let passing = 0;
  let failing = forks.length;
  while (failing - passing > 1) {
    const mid = Math.floor((passing + failing) / 2);
    if (await fails(mid)) failing = mid;
    else passing = mid;
  }
  if (failing === 1 && !basePasses && (await fails(0))) return undefined;
  return forks[failing - 1];
}
