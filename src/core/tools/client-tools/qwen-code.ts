import { QWEN_DEFERRED } from '../../wire/mcp-tools.ts';
import { z } from 'zod';
import { runBash } from '../sandbox/bash.ts';
import { editFileMany } from '../files/edit-file.ts';
import { listDir } from '../files/list-dir.ts';
import { readFile } from '../files/read-file.ts';
import { capResult } from '../host-tools.ts';
import { toolFailure } from '../result.ts';
import { writeFile } from '../files/write-file.ts';
import { clientGlob, clientGrep, clientTool as tool } from './common.ts';
import type { ClientTool, ClientToolIo, ToolSet } from './types.ts';

/*
 * Qwen Code 0.24.4's tools. Its recorded requests (test/fixtures/qwen-code/0.24.4,
 * test/fixtures/qwen-code-openai) declare `read_file`, `glob` and `grep_search` up front (a
 * non-interactive session without approval leaves the tools with effects out); `write_file`,
 * `edit` (`replace` in older versions), `run_shell_command`, `list_directory` and
 * `read_many_files` appear in sessions that allow them. Inputs follow its schemas: absolute
 * `file_path`, 0-based `offset`, `null` for an omitted optional.
 */

const filePath = z.string().min(1, 'expected an absolute file path');
const optionalInt = (min: number) => z.number().int().min(min).nullish();

const readInput = z.strictObject({
  file_path: filePath,
  offset: optionalInt(0),
  limit: optionalInt(1),
  pages: z.string().nullish(),
});
const writeInput = z.strictObject({
  file_path: filePath,
  content: z.string(),
  modified_by_user: z.boolean().optional(),
});
const editInput = z.strictObject({
  file_path: filePath,
  old_string: z.string().min(1, 'expected the exact text to replace, not an empty string'),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
  expected_replacements: z.number().int().min(1).optional(),
  modified_by_user: z.boolean().optional(),
});
const shellInput = z.strictObject({
  command: z.string().min(1, 'expected a non-empty command'),
  is_background: z.boolean().optional(),
  description: z.string().optional(),
  directory: z.string().optional(),
  timeout: z.number().positive().optional(),
});
const grepInput = z.strictObject({
  pattern: z.string().min(1, 'expected a non-empty pattern'),
  glob: z.string().min(1).optional(),
  path: z.string().min(1).optional(),
  limit: z.number().int().min(1).optional(),
});
const globInput = z.strictObject({
  pattern: z.string().min(1, 'expected a non-empty pattern'),
  path: z.string().optional(),
});
const listInput = z.strictObject({
  path: filePath,
  ignore: z.array(z.string()).optional(),
  file_filtering_options: z.record(z.string(), z.unknown()).optional(),
});
const readManyInput = z.strictObject({
  paths: z.array(z.string().min(1)).min(1, 'expected at least one path or glob'),
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  recursive: z.boolean().optional(),
  useDefaultExcludes: z.boolean().optional(),
  file_filtering_options: z.record(z.string(), z.unknown()).optional(),
});

async function read(input: z.infer<typeof readInput>, io: ClientToolIo): Promise<string> {
  const offset = input.offset ?? undefined;
  const limit = input.limit ?? undefined;
  return readFile(
    {
      path: io.path(input.file_path),
      ...(offset !== undefined ? { offset: offset + 1 } : {}),
      ...(limit ? { limit } : {}),
    },
    io.ctx,
  );
}

async function write(input: z.infer<typeof writeInput>, io: ClientToolIo): Promise<string> {
  const said = await writeFile({ path: io.path(input.file_path), content: input.content }, io.ctx);
  return said.startsWith('Created')
    ? `Successfully created and wrote to new file: ${input.file_path}.`
    : `Successfully overwrote file: ${input.file_path}.`;
}

async function edit(input: z.infer<typeof editInput>, io: ClientToolIo): Promise<string> {
  const all = input.replace_all === true || (input.expected_replacements ?? 1) > 1;
  const [count] = await editFileMany(io.path(input.file_path), [{ ...input, replace_all: all }], io.ctx);
  if (input.expected_replacements !== undefined && count !== input.expected_replacements)
    throw toolFailure(
      'TOOL_EDIT_FAILED',
      `expected ${input.expected_replacements} replacement(s) in ${input.file_path} but made ${count}; the file was changed: read it again`,
    );
  return `Successfully modified file: ${input.file_path} (${count} replacement${count === 1 ? '' : 's'}).`;
}

async function shell(input: z.infer<typeof shellInput>, io: ClientToolIo): Promise<string> {
  const cd = input.directory !== undefined ? `cd -- '${io.path(input.directory).replace(/'/g, "'\\''")}' && ` : '';
  const limit = io.ctx.limits.bashTimeoutMs;
  const ctx = input.timeout
    ? { ...io.ctx, limits: { ...io.ctx.limits, bashTimeoutMs: Math.min(limit, input.timeout) } }
    : io.ctx;
  const out = await runBash({ command: `${cd}${input.command}` }, ctx);
  return input.is_background ? `${out}\n[ran in the foreground: a fork has no background shells]` : out;
}

async function grepSearch(input: z.infer<typeof grepInput>, io: ClientToolIo): Promise<string> {
  const { matches, notes } = await clientGrep(input, io);
  const where = input.path ?? 'the workspace';
  if (matches.length === 0) return `No matches found for pattern "${input.pattern}" in ${where}.`;
  const shown = input.limit !== undefined ? matches.slice(0, input.limit) : matches;
  const lines = [
    `Found ${matches.length} match${matches.length === 1 ? '' : 'es'} for pattern "${input.pattern}" in ${where}:`,
  ];
  let file: string | undefined;
  for (const m of shown) {
    if (m.file !== file) lines.push('---', `File: ${m.file}`);
    file = m.file;
    lines.push(`L${m.line}: ${m.text}`);
  }
  lines.push('---', ...notes);
  return lines.join('\n');
}

async function globTool(input: z.infer<typeof globInput>, io: ClientToolIo): Promise<string> {
  const found = await clientGlob(input.pattern, input.path, io);
  if (found.length === 0) return `No files found matching pattern "${input.pattern}".`;
  const files = found.filter((f) => !f.startsWith('['));
  return [
    `Found ${files.length} file(s) matching "${input.pattern}":`,
    ...found.map((f) => (f.startsWith('[') ? f : io.shown(f))),
  ].join('\n');
}

async function listDirectory(input: z.infer<typeof listInput>, io: ClientToolIo): Promise<string> {
  const out = await listDir({ path: io.path(input.path) }, io.ctx);
  return `Directory listing for ${input.path}:\n${out}`;
}

/**
 * Every named file once, in order, until their total reaches `maxReadBytes` (one read's
 * worth): the rest are named, not read. One 260 KB file named 300 times made a 78 MB result
 * that the API refused (413) and resume would have sent again.
 */
async function readMany(input: z.infer<typeof readManyInput>, io: ClientToolIo): Promise<string> {
  const max = io.ctx.limits.maxReadBytes;
  const parts: string[] = [];
  const seen = new Set<string>();
  const skipped: string[] = [];
  let total = 0;
  for (const given of [...input.paths, ...(input.include ?? [])]) {
    const files = /[*?[{]/.test(given) ? await clientGlob(given, undefined, io) : [io.path(given)];
    for (const file of files.filter((f) => !f.startsWith('['))) {
      if (seen.has(file)) continue;
      seen.add(file);
      if (total >= max) {
        skipped.push(io.shown(file));
        continue;
      }
      let text = await readFile({ path: file }, io.ctx).catch(
        (err: unknown) => `[not read: ${(err as Error).message}]`,
      );
      if (total + Buffer.byteLength(text) > max) text = capResult(text, max - total);
      const part = `--- ${io.shown(file)} ---\n${text}`;
      total += Buffer.byteLength(part);
      parts.push(part);
    }
  }
  if (parts.length === 0) return 'No files matched the given paths.';
  const note =
    skipped.length === 0
      ? ''
      : `\n[not read: ${skipped.length} more file(s) past the ${max}-byte total of one call (${skipped.slice(0, 20).join(', ')}${skipped.length > 20 ? ', …' : ''}); read them in another call]`;
  return `${parts.join('\n\n')}\n--- End of content ---${note}`;
}

const tools: ClientTool[] = [
  tool('read_file', 'read_file', readInput, read),
  tool('write_file', 'write_file', writeInput, write),
  tool('edit', 'edit_file', editInput, edit),
  tool('replace', 'edit_file', editInput, edit),
  tool('run_shell_command', 'bash', shellInput, shell),
  tool('grep_search', 'grep', grepInput, grepSearch),
  tool('glob', 'glob', globInput, globTool),
  tool('list_directory', 'list_dir', listInput, listDirectory),
  tool('read_many_files', 'read_file', readManyInput, readMany),
];

const WITH_TOOLS = 'do the work with read_file, edit, write_file and run_shell_command, then report';

/** Qwen Code's tools, and those no fork runs (its `agent` is the spawn tool). */
export const QWEN_CODE_TOOL_SET: ToolSet = {
  name: 'qwen-code',
  tools: new Map(tools.map((t) => [t.name, t])),
  spawn: ['agent', 'task'],
  deferred: QWEN_DEFERRED,
  refused: {
    skill: `skills are loaded by Qwen Code, not in a fork: ${WITH_TOOLS}`,
    get_goal: "a fork's goal is its directive",
    update_goal: 'a fork reports in its final answer: say there whether the directive is done or blocked',
    list_agents: `a fork has no agents to list: ${WITH_TOOLS}`,
    tool_search:
      "a fork's tool list is the parent's, fixed for the cache: use the tools it declares (read_file, glob, grep_search and the others declared)",
    tool_call: 'a fork runs only the tools the parent declares: call them by name',
    web_fetch: `a fork has no network tools: ${WITH_TOOLS}`,
    web_search: `a fork has no network tools: ${WITH_TOOLS}`,
    google_web_search: `a fork has no network tools: ${WITH_TOOLS}`,
    todo_write: 'keep the plan in your head and the result in your report',
    save_memory: 'a fork keeps no memory: put what matters in your report',
    exit_plan_mode: 'a fork does not plan with the user: do the work, then report',
    ask_user_question: 'nobody answers questions in a fork: decide, and say what you assumed in your report',
    cron_create: 'a fork runs once and cannot schedule',
    cron_delete: 'a fork runs once and cannot schedule',
    cron_list: 'a fork runs once and cannot schedule',
    loop_wakeup: 'a fork runs once and cannot be woken later',
    send_message: 'a fork reports in its final answer',
    task_stop: 'a fork has no background tasks',
    enter_worktree: 'the fork already works in its own workspace',
    exit_worktree: 'the fork already works in its own workspace',
    record_artifact: 'name the files you made in your report',
    report_findings: 'a fork reports in its final answer: put the findings there',
  },
  clientRoot: (texts) => {
    for (const text of texts) {
      const m = /I'm currently working in the directory: (\/[^\n]*?)\s*$/m.exec(text);
      if (m) return m[1];
    }
    return undefined;
  },
};
