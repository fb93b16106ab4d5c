import { z } from 'zod';
import type { ExecutableToolName } from '../wire/tool-names.ts';

/*
 * Input schemas, checked before a tool runs. Strict objects: a misspelt optional field (say
 * `replaceAll`) would otherwise be dropped silently and the model would never learn why its
 * call did not do what it meant. The declared JSON schemas say `additionalProperties: false`.
 */

const path = z.string().min(1, 'expected a non-empty path');
const positiveInt = z.number().int().min(1);

export const readFileInput = z.strictObject({ path, offset: positiveInt.optional(), limit: positiveInt.optional() });
export const listDirInput = z.strictObject({ path });
export const grepInput = z.strictObject({
  pattern: z.string().min(1, 'expected a non-empty pattern'),
  path: path.optional(),
  glob: z.string().min(1, 'expected a non-empty glob').optional(),
});
export const globInput = z.strictObject({ pattern: z.string().min(1, 'expected a non-empty pattern') });
export const editFileInput = z.strictObject({
  path,
  old_string: z.string().min(1, 'expected the exact text to replace, not an empty string'),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});
export const writeFileInput = z.strictObject({ path, content: z.string() });
export const bashInput = z.strictObject({ command: z.string().min(1, 'expected a non-empty command') });

export type ReadFileInput = z.infer<typeof readFileInput>;
export type ListDirInput = z.infer<typeof listDirInput>;
export type GrepInput = z.infer<typeof grepInput>;
export type GlobInput = z.infer<typeof globInput>;
export type EditFileInput = z.infer<typeof editFileInput>;
export type WriteFileInput = z.infer<typeof writeFileInput>;
export type BashInput = z.infer<typeof bashInput>;

/** The input schema of every tool the executor runs, by name. */
export const TOOL_INPUT_SCHEMAS = {
  read_file: readFileInput,
  list_dir: listDirInput,
  grep: grepInput,
  glob: globInput,
  edit_file: editFileInput,
  write_file: writeFileInput,
  bash: bashInput,
} as const satisfies Record<ExecutableToolName, z.ZodType>;
