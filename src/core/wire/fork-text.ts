/**
 * The fork's text conventions, shared by the fork builder, the recursion guard, the tools and
 * the emulator's scripted models (which must recognise a fork child without importing the fork
 * modules). Every one of them ends up in request bytes: changing one changes every frozen
 * prefix hash.
 */

/** The tag that wraps the fork rules and marks a conversation as a fork child. */
export const FORK_BOILERPLATE_TAG = 'fork-boilerplate';
export const FORK_BOILERPLATE_OPEN = `<${FORK_BOILERPLATE_TAG}>`;
export const FORK_BOILERPLATE_CLOSE = `</${FORK_BOILERPLATE_TAG}>`;

/** What follows the boilerplate: `Directive: <text>`. */
export const DIRECTIVE_PREFIX = 'Directive: ';

/**
 * The one tool_result every child sees for every spawn call of the parent. Constant, so the
 * placeholder blocks are byte-identical across siblings. Em dash, as both reference
 * implementations use (the Russian chapter prints it as `--`).
 */
export const FORK_PLACEHOLDER_RESULT = 'Fork started — processing in background';

/** Qwen layout: the model's acknowledgement turn and the task prompt after it. */
export const QWEN_ACK = 'Understood. Executing directive now.';
export const QWEN_BEGIN = 'Begin.';

/** The query source carried with a fork child's task (fast path of the recursion guard). */
export const FORK_QUERY_SOURCE = 'agent:builtin:fork';

/** Name of the spawn tool the parent calls (`engine.agentTool()`); input `{ directive, description?, subagent_type? }`. */
export const SPAWN_TOOL_NAME = 'agent';

/** The report fields a fork ends with, in order. */
export const REPORT_FIELDS = ['Scope', 'Result', 'Key files', 'Files changed', 'Issues'] as const;

/*
 * User turns the loop adds to a fork's own conversation (never to the shared prefix). Each
 * opens with its tag so a stateless scripted model can tell where a fresh attempt starts.
 */

/** After a turn that stopped at `max_tokens` without a tool call: the one continuation asked for. */
export const CONTINUE_AFTER_MAX_TOKENS =
  'Your last response was cut off by the output limit (max_tokens) before you finished. Do not repeat work that is already done: continue, and end with your complete report (every field).';

/** The plan's check failed after the fork reported: its output, and a request to fix it. */
export const CHECK_FAILED_TAG = 'check-failed';

/** `forkcache resume --retry`: a fork that ended not done is asked to carry out its directive again. */
export const FORK_RETRY_TAG = 'fork-retry';

/** The fork's report did not match the fan-out's output schema: the errors, and a request to report again. */
export const OUTPUT_INVALID_TAG = 'output-invalid';

/**
 * The integration step's fix-up turn: the whole repository's check failed with this fork's
 * changes merged, and the fork is shown the output that names its files.
 */
export const FORK_FIXUP_TAG = 'integration-failed';

/**
 * forkcache/ai-sdk's background mode: the fork tool's answer when the children run on, and the
 * first line of the later message that hands the app's model their reports.
 */
export const BACKGROUND_STARTED = 'started in the background';
export const BACKGROUND_REPORTS_HEADING = 'forkcache: the reports of background forks';

/**
 * A child's own text (its report, an error that quotes its output) inside a reply forkcache
 * composes of sections (`## fork 3 (completed): …`): every line quoted (`> `), so no line of it
 * can begin a section and the sections' structure comes from forkcache alone. A report that
 * writes `## fork 9 (completed)` shows as `> ## fork 9 (completed)`, inside its own fork.
 */
export function quoteChildText(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => (line === '' ? '>' : `> ${line}`))
    .join('\n');
}
