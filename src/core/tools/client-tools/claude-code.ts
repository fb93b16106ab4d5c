import { z } from 'zod';
import { runBash } from '../sandbox/bash.ts';
import { editFileMany } from '../files/edit-file.ts';
import { listDir } from '../files/list-dir.ts';
import { readFileParts } from '../files/read-file.ts';
import { writeFile } from '../files/write-file.ts';
import { clientGlob, clientGrep, clientTool as tool } from './common.ts';
import type { ClientTool, ClientToolIo, ToolSet } from './types.ts';

/*
 * Claude Code 2.1.332's tools, as its requests declare them (test/fixtures/claude-code/2.1.332:
 * `Read`, `Write`, `Edit`, `Bash`; `Grep`, `Glob`, `LS`, `MultiEdit` where a version declares
 * them), run by forkcache's executors. Inputs are checked as strictly as the declared schemas
 * (`additionalProperties: false`); results take the shape Claude Code's own tools give (its
 * `Read` numbers lines `N\t…`, as the recorded sessions show).
 */

const filePath = z.string().min(1, 'expected an absolute file path');
const lineNumber = z.number().int().min(0);

const readInput = z.strictObject({
  file_path: filePath,
  offset: lineNumber.optional(),
  limit: z.number().int().min(1).optional(),
  pages: z.string().optional(),
  allow_large: z.boolean().optional(),
});
const writeInput = z.strictObject({ file_path: filePath, content: z.string() });
const editShape = {
  old_string: z.string().min(1, 'expected the exact text to replace, not an empty string'),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
};
const editInput = z.strictObject({ file_path: filePath, ...editShape });
const multiEditInput = z.strictObject({
  file_path: filePath,
  edits: z.array(z.strictObject(editShape)).min(1, 'expected at least one edit'),
});
const bashInput = z.strictObject({
  command: z.string().min(1, 'expected a non-empty command'),
  timeout: z.number().positive().optional(),
  description: z.string().optional(),
  run_in_background: z.boolean().optional(),
  dangerouslyDisableSandbox: z.boolean().optional(),
});
// Grep's options beyond these (-A/-B/-C, type, multiline) are accepted and not applied: the
// result says which were ignored, so the model knows what it got.
const grepInput = z.object({
  pattern: z.string().min(1, 'expected a non-empty pattern'),
  path: z.string().min(1).optional(),
  glob: z.string().min(1).optional(),
  output_mode: z.enum(['content', 'files_with_matches', 'count']).optional(),
  '-i': z.boolean().optional(),
  '-n': z.boolean().optional(),
  head_limit: z.number().int().min(1).optional(),
});
const globInput = z.strictObject({
  pattern: z.string().min(1, 'expected a non-empty pattern'),
  path: z.string().optional(),
});
const lsInput = z.strictObject({ path: filePath, ignore: z.array(z.string()).optional() });

/** `N\tline` per line from `first`, as Claude Code's Read shows a file (the last, empty line too). */
function numbered(text: string, first: number): string {
  return text
    .split('\n')
    .map((line, i) => `${first + i}\t${line}`)
    .join('\n');
}

async function read(input: z.infer<typeof readInput>, io: ClientToolIo): Promise<string> {
  const path = io.path(input.file_path);
  // Claude Code's offset is the first line's number; 0 means the start, as there
  const offset = input.offset !== undefined && input.offset > 0 ? input.offset : undefined;
  const part = await readFileParts(
    { path, ...(offset ? { offset } : {}), ...(input.limit ? { limit: input.limit } : {}) },
    io.ctx,
  );
  if (part.text === '' && part.firstLine === 1)
    return `<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>`;
  // the whole file shows its last, empty line as Claude Code does (`3\t`); a part ends at its last line
  const partial = part.note !== undefined || offset !== undefined || input.limit !== undefined;
  const body = numbered(partial && part.text.endsWith('\n') ? part.text.slice(0, -1) : part.text, part.firstLine);
  return part.note === undefined ? body : `${body}\n${part.note}`;
}

async function write(input: z.infer<typeof writeInput>, io: ClientToolIo): Promise<string> {
  const said = await writeFile({ path: io.path(input.file_path), content: input.content }, io.ctx);
  return said.startsWith('Created')
    ? `File created successfully at: ${input.file_path}`
    : `The file ${input.file_path} has been updated successfully.`;
}

async function edit(input: z.infer<typeof editInput>, io: ClientToolIo): Promise<string> {
  await editFileMany(io.path(input.file_path), [input], io.ctx);
  return input.replace_all
    ? `The file ${input.file_path} has been updated. All occurrences were successfully replaced.`
    : `The file ${input.file_path} has been updated successfully.`;
}

async function multiEdit(input: z.infer<typeof multiEditInput>, io: ClientToolIo): Promise<string> {
  await editFileMany(io.path(input.file_path), input.edits, io.ctx);
  return `Applied ${input.edits.length} edit${input.edits.length === 1 ? '' : 's'} to ${input.file_path}.`;
}

async function bash(input: z.infer<typeof bashInput>, io: ClientToolIo): Promise<string> {
  const limit = io.ctx.limits.bashTimeoutMs;
  const ctx = input.timeout
    ? { ...io.ctx, limits: { ...io.ctx.limits, bashTimeoutMs: Math.min(limit, input.timeout) } }
    : io.ctx;
  const out = await runBash({ command: input.command }, ctx);
  const notes = [
    ...(input.run_in_background ? ['[ran in the foreground: a fork has no background shells]'] : []),
    ...(input.dangerouslyDisableSandbox ? ["[the sandbox stays on: a fork's commands always run in it]"] : []),
  ];
  return notes.length === 0 ? out : `${out}\n${notes.join('\n')}`;
}

async function grepTool(input: z.infer<typeof grepInput>, io: ClientToolIo): Promise<string> {
  const { matches, notes } = await clientGrep({ ...input, ignoreCase: input['-i'] }, io);
  const mode = input.output_mode ?? 'files_with_matches';
  let lines: string[];
  if (mode === 'content') lines = matches.map((m) => `${io.shown(m.file)}:${m.line}:${m.text}`);
  else {
    const counts = new Map<string, number>();
    for (const m of matches) counts.set(m.file, (counts.get(m.file) ?? 0) + 1);
    lines =
      mode === 'count'
        ? [...counts].map(([file, n]) => `${io.shown(file)}:${n}`)
        : [`Found ${counts.size} file${counts.size === 1 ? '' : 's'}`, ...[...counts.keys()].map((f) => io.shown(f))];
  }
  if (matches.length === 0) lines = mode === 'files_with_matches' ? ['No files found'] : ['No matches found'];
  if (input.head_limit !== undefined) lines = lines.slice(0, input.head_limit);
  return [...lines, ...notes].join('\n');
}

async function globTool(input: z.infer<typeof globInput>, io: ClientToolIo): Promise<string> {
  const found = await clientGlob(input.pattern, input.path, io);
  if (found.length === 0) return 'No files found';
  return found.map((f) => (f.startsWith('[') ? f : io.shown(f))).join('\n');
}

async function ls(input: z.infer<typeof lsInput>, io: ClientToolIo): Promise<string> {
  return listDir({ path: io.path(input.path) }, io.ctx);
}

const tools: ClientTool[] = [
  tool('Read', 'read_file', readInput, read),
  tool('Write', 'write_file', writeInput, write),
  tool('Edit', 'edit_file', editInput, edit),
  tool('MultiEdit', 'edit_file', multiEditInput, multiEdit),
  tool('Bash', 'bash', bashInput, bash),
  tool('Grep', 'grep', grepInput, grepTool),
  tool('Glob', 'glob', globInput, globTool),
  tool('LS', 'list_dir', lsInput, ls),
];

const WITH_TOOLS = 'do the work with Read, Edit, Write and Bash, then report';

/** Claude Code's tools, and those no fork runs (its Agent is the spawn tool: the recursion guard refuses it). */
export const CLAUDE_CODE_TOOL_SET: ToolSet = {
  name: 'claude-code',
  tools: new Map(tools.map((t) => [t.name, t])),
  spawn: ['Agent', 'Task'],
  refused: {
    ScheduleWakeup: `a fork runs once and cannot be woken later: ${WITH_TOOLS}`,
    Workflow: `a fork cannot start workflows: ${WITH_TOOLS}`,
    Skill: `skills are loaded by Claude Code, not in a fork: ${WITH_TOOLS}`,
    ListAgents: `a fork has no agents to list: ${WITH_TOOLS}`,
    ReportFindings: 'a fork reports in its final answer: put the findings there',
    ToolSearch:
      "a fork's tool list is the parent's, fixed for the cache: use the tools already loaded (Read, Edit, Write, Bash, and what the conversation loaded before the fork)",
    DeferredToolPlaceholder: 'this is a placeholder, never a tool to call',
    WebFetch: `a fork has no network tools: ${WITH_TOOLS}`,
    WebSearch: `a fork has no network tools: ${WITH_TOOLS}`,
    NotebookEdit: 'edit the notebook as JSON text with Read and Edit',
    TodoWrite: 'keep the plan in your head and the result in your report',
    TaskCreate: 'keep the plan in your head and the result in your report',
    TaskUpdate: 'keep the plan in your head and the result in your report',
    TaskList: 'keep the plan in your head and the result in your report',
    TaskGet: 'keep the plan in your head and the result in your report',
    TaskOutput: 'a fork has no background tasks; run commands with Bash',
    TaskStop: 'a fork has no background tasks; run commands with Bash',
    KillShell: 'a fork has no background shells',
    BashOutput: 'a fork has no background shells; run the command with Bash',
    AskUserQuestion: 'nobody answers questions in a fork: decide, and say what you assumed in your report',
    ExitPlanMode: 'a fork does not plan with the user: do the work, then report',
    EnterPlanMode: 'a fork does not plan with the user: do the work, then report',
    SlashCommand: `slash commands are Claude Code's, not a fork's: ${WITH_TOOLS}`,
    SendMessage: 'a fork reports in its final answer',
    CronCreate: 'a fork runs once and cannot schedule',
    CronDelete: 'a fork runs once and cannot schedule',
    CronList: 'a fork runs once and cannot schedule',
    EnterWorktree: 'the fork already works in its own workspace',
    ExitWorktree: 'the fork already works in its own workspace',
  },
  clientRoot: (texts) => {
    for (const text of texts) {
      const m = /^Primary working directory: (\/[^\n]*?)\s*$/m.exec(text);
      if (m) return m[1];
    }
    return undefined;
  },
};
