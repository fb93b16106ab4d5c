import type { z } from 'zod';
import { glob } from '../files/glob.ts';
import { grep } from '../files/grep.ts';
import { RUN } from './handler.ts';
import type { ClientTool, ClientToolIo } from './types.ts';

/** Lines of a forkcache grep result that are matches (`file:line:text`), and the notes after them. */
export function grepMatches(output: string): {
  matches: { file: string; line: number; text: string }[];
  notes: string[];
} {
  const matches: { file: string; line: number; text: string }[] = [];
  const notes: string[] = [];
  if (output === 'No matches.') return { matches, notes };
  for (const line of output.split('\n')) {
    const m = /^(.*?):(\d+):(.*)$/s.exec(line);
    if (m && !line.startsWith('[')) matches.push({ file: m[1]!, line: Number(m[2]), text: m[3]! });
    else notes.push(line);
  }
  return { matches, notes };
}

/** forkcache's grep from a client's pattern/path/glob, case-insensitive on request. */
export async function clientGrep(
  input: { pattern: string; path?: string | undefined; glob?: string | undefined; ignoreCase?: boolean | undefined },
  io: ClientToolIo,
): Promise<ReturnType<typeof grepMatches>> {
  const pattern = input.ignoreCase && !input.pattern.startsWith('(?i)') ? `(?i)${input.pattern}` : input.pattern;
  const out = await grep(
    {
      pattern,
      ...(input.path !== undefined ? { path: io.path(input.path) } : {}),
      ...(input.glob !== undefined ? { glob: input.glob } : {}),
    },
    io.ctx,
  );
  return grepMatches(out);
}

/** Workspace-relative paths matching a client's glob, searched under `path` when given. */
export async function clientGlob(pattern: string, under: string | undefined, io: ClientToolIo): Promise<string[]> {
  const base = under === undefined ? '' : io.path(under).replace(/\/+$/, '');
  const rel = pattern.startsWith('/') ? io.path(pattern) : base === '' || base === '.' ? pattern : `${base}/${pattern}`;
  const out = await glob({ pattern: rel }, io.ctx);
  if (out === 'No files matched.') return [];
  return out.split('\n');
}

/** A client's tool run by `run`: read-only unless its capability edits, writes or runs commands. */
export function clientTool<S extends z.ZodType>(
  name: string,
  capability: ClientTool['capability'],
  input: S,
  run: (input: z.infer<S>, io: ClientToolIo) => Promise<string>,
): ClientTool {
  return {
    name,
    capability,
    readOnly: capability !== 'edit_file' && capability !== 'write_file' && capability !== 'bash',
    input,
    [RUN]: run,
  };
}
