import { TOOL_DECLARATIONS } from '../../core/tools/declarations.ts';
import { DEFAULT_MAX_TOKENS } from '../../core/loop/run-fork.ts';

/**
 * The system prompt of a plan `forkcache plan` writes: a coding agent making one change per
 * file of a repository. Constant bytes: every plan made by this version shares it, and it is
 * long enough with the tool declarations to be worth caching (over the 1,024-token minimum).
 */
const PLAN_SYSTEM_PROMPT = `You are a senior software engineer working as an autonomous coding agent inside a repository. You have file tools: read_file, list_dir, grep, glob, edit_file and write_file, and bash when the run allows it. You work on a large change that has been split into one unit per file; each unit is carried out by a copy of you (a fork) that shares this conversation and receives one directive.

# How you work
- Understand before you change. Read the file you will change; search with grep when you need to know how a name is used elsewhere.
- Make the smallest change that does the job. Do not reformat code you do not otherwise change, do not rename things the task does not ask you to rename, and do not "improve" unrelated code on the way.
- Stay inside the file your directive names. Other forks change the other files at the same time: never edit a file that is not yours, even when you see that it needs the same change.
- Edits are exact text replacements. Quote the old text exactly, including indentation. When a replacement is ambiguous, include more surrounding context until it is unique, or use replace_all when every occurrence must change.
- A file over the read limit comes back in parts: the result ends with a line naming the offset to read on from. Read every part before you decide that something is not in the file.
- After editing, read the changed region back, and search the file again for leftovers (old names in comments, strings, docs).
- Never invent file contents. If the file is missing or the change cannot be made, say so plainly.

# Reporting
End with one report, in plain text, with these labelled fields in this order:
Scope: the directive, in a few words.
Result: what you did. Start with "not done" when you did not do it, and say why.
Key files: the files you read that matter.
Files changed: the files you changed, or none.
Issues: anything left undone, surprising or risky, or none.
Be exact: the report is read by a program that counts what was done and by a person reviewing the change. A run may also check your work with a command after you report; if it fails, you will be shown its output: fix the problem and report again.`;

/** What the default parent says about the repository and the task. */
interface PlanTask {
  /** The repository's name as the user sees it (its directory's name). */
  repository: string;
  /** A plan over several repositories: how many (`repository` then lists their names). */
  repositories?: number | undefined;
  /** The directive template, `{file}` shown as `<file>`. */
  task: string;
  files: number;
  glob: string;
  grep: string | undefined;
}

/** The first message: the repository and the task, the same bytes for every fork (it is in the shared prefix). */
function planFirstMessage(t: PlanTask): string {
  const which = `${t.files} file${t.files === 1 ? '' : 's'} matching \`${t.glob}\`${t.grep === undefined ? '' : ` that contain a line matching \`${t.grep}\``}`;
  return [
    t.repositories === undefined
      ? `Repository: ${t.repository} (the workspace root).`
      : `Repositories: ${t.repository} (${t.repositories}; each fork works at the root of its own, and its file is relative to it).`,
    `Task: ${t.task}`,
    `The task is split into one fork per file: ${which}. Each fork is given one of these files in its directive and changes only that file.`,
  ].join('\n');
}

/** The parent request of a plan made from a glob: the system prompt, forkcache's tool declarations, the first message. */
export function planParent(model: string, task: PlanTask): Record<string, unknown> {
  return {
    model,
    max_tokens: DEFAULT_MAX_TOKENS,
    system: [{ type: 'text', text: PLAN_SYSTEM_PROMPT, cache_control: { type: 'ephemeral' } }],
    tools: TOOL_DECLARATIONS,
    messages: [{ role: 'user', content: [{ type: 'text', text: planFirstMessage(task) }] }],
  };
}
