import type { z } from 'zod';
import { ForkcacheError, type CodeWithData, type IssuesData } from './errors.ts';

/** Render a zod path as `messages[3].content[1].tool_use_id`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(root)' : out;
}

/** One line per issue, each starting with the path it is about. */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[], prefix = ''): string {
  return issues
    .map((issue) => `${formatPath([...(prefix ? [prefix] : []), ...issue.path])}: ${issue.message}`)
    .join('; ');
}

/** Parse with a schema or throw a ForkcacheError whose message names every bad path. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, code: CodeWithData<IssuesData>, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues;
  throw new ForkcacheError(code, `${what}: ${formatZodIssues(issues)}`, {
    data: { issues: issues.map((i) => ({ path: formatPath(i.path), message: i.message })) },
  });
}
