import type { ToolContext } from '../context.ts';
import { parseGlob } from './glob-match.ts';
import type { GlobInput } from '../schemas.ts';
import { byCodeUnit, walk } from '../jail/walk.ts';

/**
 * glob: workspace-relative paths of files (and symlinks, unfollowed) matching the pattern,
 * sorted. The walk starts at the pattern's literal leading directories.
 */
export async function glob(input: GlobInput, ctx: ToolContext): Promise<string> {
  const { base, matcher } = parseGlob(input.pattern);
  let start;
  try {
    start = await ctx.jail.resolve(base === '' ? '.' : base, 'existing');
  } catch (err) {
    // A missing literal directory simply matches nothing; an escape is still reported.
    if ((err as { code?: unknown }).code === 'TOOL_NOT_FOUND') return 'No files matched.';
    throw err;
  }
  // Paths are reported (and matched) as the pattern names them, even when its literal base is
  // a symlink to another directory of the workspace (the jail has checked where it leads).
  const { entries, truncated: walkCut } = await walk(start.real, base, ctx.limits.maxWalkEntries, ctx.signal, ctx.jail);
  const matches = entries
    .filter((e) => e.kind !== 'dir' && matcher.test(e.relative))
    .map((e) => e.relative)
    .sort(byCodeUnit);
  const max = ctx.limits.maxGlobResults;
  const lines = matches.slice(0, max);
  if (lines.length === 0 && !walkCut) return 'No files matched.';
  if (matches.length > max)
    lines.push(`[truncated: ${matches.length} matches, first ${max} shown; narrow the pattern]`);
  if (walkCut)
    lines.push(`[truncated: stopped after ${ctx.limits.maxWalkEntries} entries; start the pattern with a directory]`);
  return lines.join('\n');
}
