import { QWEN_DEFERRED } from '../../../core/wire/mcp-tools.ts';
import type { MessagesRequest } from '../types.ts';
import { declaredTools, type ToolExchange } from './conversation.ts';
import { countMatches, formatReport, parseDirective, wordPattern } from './directive.ts';
import type { ScriptedTurn } from './types.ts';

/*
 * A fork child of a client's session doing its directive with that client's own tools, as a
 * real model does: `rename <old> to <new> in <path>` reads the file, edits it, then runs a
 * command to check no occurrence is left; `read <path> and report` reads; `run \`cmd\` and
 * report` runs; `use <Tool> and report` calls the tool once. Paths are absolute in the session's working directory, as the client writes
 * them. Stateless: the steps taken are found again in the conversation.
 */

interface Call {
  readonly name: string;
  readonly input: Record<string, unknown>;
}

/** A client's names and inputs for the steps. */
interface ClientToolShapes {
  readonly read: string;
  readonly bash: string;
  readInput(file: string): Record<string, unknown>;
  bashInput(command: string): Record<string, unknown>;
  /** The edit call, and the call that loads the edit tool first when it is deferred (Qwen Code). */
  edit(tools: ReadonlySet<string>, file: string, from: string, to: string): { edit: Call; load?: Call } | undefined;
  /** The call that checks no occurrence is left, and how many its result says are left. */
  check(file: string, from: string): Call;
  left(result: string): number;
  /** The session's working directory, as its prompt states it. */
  cwd(request: Readonly<MessagesRequest>): string | undefined;
  /** The file's text from a read result (Claude Code numbers its lines). */
  fileText(result: string): string;
}

const call = (name: string, input: Record<string, unknown>): ScriptedTurn => ({
  content: [{ type: 'tool_use', name, input }],
  stop_reason: 'tool_use',
});

/** The ` (i/N)` the claude-code script appends to each copy of a repeated directive. */
const NUMBERED = /\s+\(\d+\/\d+\)\s*$/;

const firstLine = (text: string): string => (text.split('\n').find((l) => l.trim() !== '') ?? '').trim();
const quote = (text: string): string => `'${text.replace(/'/g, "'\\''")}'`;

/** The next turn of a client's fork child, or undefined for a directive it has no steps for. */
export function clientChildTurn(
  request: Readonly<MessagesRequest>,
  directive: string,
  done: readonly ToolExchange[],
  shapes: ClientToolShapes,
): ScriptedTurn | undefined {
  // `fork N times: <directive>` numbers each copy `<directive> (i/N)`: the steps are the directive's
  const parsed = parseDirective(directive.replace(NUMBERED, ''));
  const cwd = shapes.cwd(request);
  const abs = (path: string): string => (cwd === undefined || path.startsWith('/') ? path : `${cwd}/${path}`);
  const report = (result: string, files: string[], issues: string[] = []): ScriptedTurn => ({
    content: [
      {
        type: 'text',
        text: formatReport({
          scope: firstLine(directive),
          result,
          keyFiles: files,
          filesChanged: issues.length ? [] : files,
          issues,
        }),
      },
    ],
    stop_reason: 'end_turn',
  });
  const tools = declaredTools(request);
  const step = (name: string) => done.filter((e) => e.name === name);
  // a check the fork may not run (no bash in this run) is not a failure of the work it checks
  const refusedCheck = (e: ToolExchange): boolean =>
    parsed.kind === 'rename-in' && e.name === shapes.bash && /is not allowed for this fork/.test(e.result?.text ?? '');
  const failed = /^use\s/i.test(firstLine(directive))
    ? undefined
    : done.find((e) => e.result?.isError && !refusedCheck(e));
  if (failed) return report('not done', [], [`${failed.name} failed: ${firstLine(failed.result!.text)}`]);
  if (parsed.kind === 'read') {
    if (!tools.has(shapes.read)) return report('not done', [], [`the ${shapes.read} tool is not declared`]);
    const [read] = step(shapes.read);
    if (!read) return call(shapes.read, shapes.readInput(abs(parsed.path)));
    const text = shapes.fileText(read.result?.text ?? '');
    return { ...report(`${parsed.path} has ${text.replace(/\n$/, '').split('\n').length} line(s)`, []) };
  }
  if (parsed.kind === 'run') {
    if (!tools.has(shapes.bash)) return report('not done', [], [`the ${shapes.bash} tool is not declared`]);
    const [ran] = step(shapes.bash);
    if (!ran) return call(shapes.bash, shapes.bashInput(parsed.command));
    return report(`the command printed ${JSON.stringify(firstLine(ran.result?.text ?? ''))}`, []);
  }
  // what a model does on reaching for a tool it saw declared: call it, and report the answer
  const use = /^use\s+(\S+)\s+and\s+report$/i.exec(firstLine(directive).replace(/\.$/, ''));
  if (use) {
    const [used] = done;
    if (!used) return call(use[1]!, {});
    return report(`${used.name} answered ${JSON.stringify(firstLine(used.result?.text ?? ''))}`, []);
  }
  if (parsed.kind !== 'rename-in') return undefined;
  const { from, to, path } = parsed;
  if (!tools.has(shapes.read)) return report('not done', [path], [`the ${shapes.read} tool is not declared`]);
  const editing = shapes.edit(tools, abs(path), from, to);
  if (!editing) return report('not done', [path], ['no edit tool is declared, nor a way to load one']);
  const check = shapes.check(abs(path), from);
  const [read] = step(shapes.read);
  if (!read) return call(shapes.read, shapes.readInput(abs(path)));
  const text = shapes.fileText(read.result?.text ?? '');
  const words = countMatches(text, wordPattern(from));
  const same = (c: Call) => (e: ToolExchange) =>
    e.name === c.name && (c.name !== QWEN_DEFERRED.call || e.input['name'] === c.input['name']);
  const edit = done.find(same(editing.edit));
  if (!edit) {
    if (words === 0) return report(`no occurrences of ${from} in ${path}; nothing to change`, []);
    if (text.split(from).length - 1 !== words)
      return report('not done', [path], [`${from} also occurs inside longer names in ${path}`]);
    if (editing.load && !done.some(same(editing.load))) return call(editing.load.name, editing.load.input);
    return call(editing.edit.name, editing.edit.input);
  }
  const checked = done.slice(done.indexOf(edit) + 1).find(same(check));
  if (!checked) return call(check.name, check.input);
  if (refusedCheck(checked))
    return report(
      `renamed ${words} occurrence(s) of ${from} to ${to} in ${path} (not checked: ${check.name} is not allowed)`,
      [path],
    );
  const left = shapes.left(checked.result?.text ?? '');
  if (left !== 0) return report('not done', [path], [`${left} occurrence(s) of ${from} remain in ${path}`]);
  return report(`renamed ${words} occurrence(s) of ${from} to ${to} in ${path}, checked with ${check.name}`, [path]);
}

/** Claude Code's Read, Edit and Bash. */
export const CLAUDE_CODE_SHAPES: ClientToolShapes = {
  read: 'Read',
  bash: 'Bash',
  readInput: (file_path) => ({ file_path }),
  bashInput: (command) => ({ command, description: 'Run the requested command' }),
  edit: (tools, file_path, from, to) =>
    tools.has('Edit')
      ? { edit: { name: 'Edit', input: { file_path, old_string: from, new_string: to, replace_all: true } } }
      : undefined,
  check: (file, from) => ({
    name: 'Bash',
    input: { command: `grep -cw -- ${quote(from)} ${quote(file)} || true`, description: 'Count what is left' },
  }),
  left: (result) => Number.parseInt(firstLine(result), 10),
  cwd: (request) => stated(request, /^Primary working directory: (\/[^\n]*?)\s*$/m),
  fileText: (result) => result.replace(/^\d+\t/gm, ''),
};

/**
 * Qwen Code's read_file, then `edit` (declared, or loaded through tool_search and run through
 * tool_call, as its recorded sessions offer it), then grep_search to check.
 */
const QWEN_CODE_SHAPES: ClientToolShapes = {
  read: 'read_file',
  bash: 'run_shell_command',
  readInput: (file_path) => ({ file_path }),
  bashInput: (command) => ({ command, description: 'Run the requested command', is_background: false }),
  edit: (tools, file_path, from, to) => {
    const input = { file_path, old_string: from, new_string: to, replace_all: true };
    if (tools.has('edit')) return { edit: { name: 'edit', input } };
    const { call, search } = QWEN_DEFERRED;
    if (!tools.has(call)) return undefined;
    return {
      edit: { name: call, input: { name: 'edit', arguments: input } },
      ...(tools.has(search) ? { load: { name: search, input: { query: 'select:edit' } } } : {}),
    };
  },
  check: (file, from) => ({ name: 'grep_search', input: { pattern: `\\b${from}\\b`, path: file } }),
  left: (result) => (/^No matches found/.test(result) ? 0 : Number(/^Found (\d+)/.exec(result)?.[1] ?? Number.NaN)),
  cwd: (request) => stated(request, /I'm currently working in the directory: (\/[^\n]*?)\s*$/m),
  fileText: (result) => result,
};

/** The client whose tools a request declares, by its read tool's schema. */
export function clientShapesOf(request: Readonly<MessagesRequest>): ClientToolShapes | undefined {
  const read = (request.tools ?? []).find((t) => t.name === 'Read' || t.name === 'read_file') as
    { name: string; input_schema?: { properties?: Record<string, unknown> } } | undefined;
  if (!read || !read.input_schema?.properties?.['file_path']) return undefined;
  return read.name === 'Read' ? CLAUDE_CODE_SHAPES : QWEN_CODE_SHAPES;
}

/** A line the client's prompt states (system prompt, or the first user turn's reminders). */
function stated(request: Readonly<MessagesRequest>, pattern: RegExp): string | undefined {
  const system = request.system;
  const texts = typeof system === 'string' ? [system] : (system ?? []).map((b) => b.text);
  const first = request.messages.find((m) => m.role === 'user');
  if (first && typeof first.content === 'string') texts.push(first.content);
  else if (first && Array.isArray(first.content))
    for (const b of first.content) if (b.type === 'text') texts.push(String((b as { text?: unknown }).text));
  for (const text of texts) {
    const m = pattern.exec(text);
    if (m) return m[1];
  }
  return undefined;
}
