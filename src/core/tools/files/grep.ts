import { lstat } from 'node:fs/promises';
import { RE2JS } from 're2js';
import path from 'node:path';
import type { ToolContext } from '../context.ts';
import { looksBinary, openRegularFile, readAll } from '../jail/file-io.ts';
import { compileGlob } from './glob-match.ts';
import { fromFsError, isToolFailure, toolFailure } from '../result.ts';
import type { GrepInput } from '../schemas.ts';
import { byCodeUnit, walk } from '../jail/walk.ts';

interface Tally {
  readonly lines: string[];
  more: boolean;
  binary: number;
  large: number;
}

/** A compiled search pattern: `test(line)`. */
interface LinePattern {
  test(line: string): boolean;
}

/**
 * The model's pattern, compiled by RE2 (re2js): matching is linear in the line's length, so a
 * pattern like `(a+)+$` cannot pin the worker's CPU (it took 13 s on 27 characters with
 * RegExp, and the thread could not even be cancelled). RE2 has no lookaround and no
 * backreferences; such a pattern is refused with a message saying so.
 */
function compilePattern(pattern: string): LinePattern {
  try {
    const re = RE2JS.compile(pattern);
    return { test: (line) => re.matcher(line).find() };
  } catch (err) {
    throw toolFailure(
      'TOOL_BAD_PATTERN',
      `invalid regular expression (RE2 syntax: no lookaround, no backreferences): ${(err as Error).message}`,
    );
  }
}

/** Lines searched between two checks of the call's deadline and cancellation. */
const CHECK_EVERY_LINES = 256;

/** The `glob` filter: a pattern without `/` tests the file name, otherwise the path below `path`. */
function compileFilter(glob: string | undefined, base: string): ((relative: string) => boolean) | undefined {
  if (glob === undefined) return undefined;
  const matcher = compileGlob(glob);
  if (!glob.includes('/')) return (relative) => matcher.test(path.posix.basename(relative));
  return (relative) => matcher.test(base === '' ? relative : relative.slice(base.length + 1));
}

/** The files to search, workspace-relative and sorted. Symlinks are skipped, never followed. */
async function candidates(
  real: string,
  relative: string,
  display: string,
  ctx: ToolContext,
): Promise<{ files: string[]; cut: boolean }> {
  let isDir: boolean;
  try {
    isDir = (await lstat(real)).isDirectory();
  } catch (err) {
    throw fromFsError(err, display);
  }
  if (!isDir) return { files: [relative], cut: false };
  const { entries, truncated } = await walk(real, relative, ctx.limits.maxWalkEntries, ctx.signal, ctx.jail);
  const files = entries.filter((e) => e.kind === 'file').map((e) => e.relative);
  return { files: files.sort(byCodeUnit), cut: truncated };
}

async function searchFile(relative: string, regex: LinePattern, tally: Tally, ctx: ToolContext): Promise<void> {
  let file;
  try {
    file = await openRegularFile(path.join(ctx.jail.root, relative), relative, ctx.jail);
  } catch (err) {
    if (isToolFailure(err)) return; // vanished or turned into something else since the walk
    throw err;
  }
  try {
    if (file.size > ctx.limits.maxGrepFileBytes) {
      tally.large += 1;
      return;
    }
    if (await looksBinary(file.handle)) {
      tally.binary += 1;
      return;
    }
    const lines = (await readAll(file, ctx.signal)).toString('utf8').split('\n');
    const max = ctx.limits.maxLineChars;
    for (let i = 0; i < lines.length; i += 1) {
      if (i % CHECK_EVERY_LINES === 0) ctx.signal?.throwIfAborted();
      const line = (lines[i] as string).replace(/\r$/, '');
      if (!regex.test(line)) continue;
      if (tally.lines.length >= ctx.limits.maxGrepMatches) {
        tally.more = true;
        return;
      }
      const text = line.length > max ? `${line.slice(0, max)}…` : line;
      tally.lines.push(`${relative}:${i + 1}:${text}`);
    }
  } finally {
    await file.handle.close();
  }
}

/** grep: `file:line:text` for every matching line, files in path order, capped with a note. */
export async function grep(input: GrepInput, ctx: ToolContext): Promise<string> {
  const regex = compilePattern(input.pattern);
  const display = input.path ?? '.';
  const target = await ctx.jail.resolve(display, 'existing');
  const filter = compileFilter(input.glob, target.relative);
  const { files, cut } = await candidates(target.real, target.relative, display, ctx);
  const tally: Tally = { lines: [], more: false, binary: 0, large: 0 };
  for (const relative of files) {
    ctx.signal?.throwIfAborted();
    if (filter !== undefined && !filter(relative)) continue;
    await searchFile(relative, regex, tally, ctx);
    if (tally.more) break;
  }
  const out = tally.lines.length === 0 ? ['No matches.'] : [...tally.lines];
  if (tally.more) {
    out.push(`[truncated: first ${ctx.limits.maxGrepMatches} matches shown; narrow the pattern, path or glob]`);
  }
  if (cut) out.push(`[truncated: stopped after ${ctx.limits.maxWalkEntries} entries; pass a narrower path]`);
  if (tally.large > 0) out.push(`[skipped ${tally.large} file(s) over ${ctx.limits.maxGrepFileBytes} bytes]`);
  if (tally.binary > 0) out.push(`[skipped ${tally.binary} binary file(s)]`);
  return out.join('\n');
}
