import { MCP_FORK_TOOL, QWEN_DEFERRED } from '../../../core/wire/mcp-tools.ts';
import { FORK_BOILERPLATE_OPEN } from '../../../core/wire/fork-text.ts';
import { blocksOf, declaredTools, isSystemReminder, lastUserText, toolExchanges } from './conversation.ts';
import { CLAUDE_CODE_SHAPES, clientChildTurn, clientShapesOf } from './client-child.ts';
import { formatReport } from './directive.ts';
import type { ScriptBlock, ScriptedModel, ScriptedTurn } from './types.ts';

/*
 * `claude-code`: the refactor script's directive idea with Claude Code's own tool names
 * (`Agent`, `Read`, `Bash`), so Claude Code itself can be driven offline through a tool session
 * and a real fork fan-out (its Agent tool with `subagent_type: "fork"`). One step per request,
 * derived from the conversation, like every scripted model.
 *
 *   fork <directive> | <directive> [| …]   → one assistant turn with one Agent fork call each
 *                                            (run in the foreground, so their reports come back
 *                                            as tool results), then a summary; when the request
 *                                            declares an MCP fork tool (`mcp__<server>__fork`,
 *                                            e.g. `forkcache mcp`), one call of it with every
 *                                            directive instead (Qwen Code: `tool_search`, then
 *                                            `tool_call` naming it)
 *   fork <N> times: <directive>            → the same with N directives `<directive> (i/N)`
 *   read <path> then run `<command>`       → Read, then Bash, then a summary
 *   read <path>                            → Read, then a summary
 * A fork child (a user text with `<fork-boilerplate>`) does its directive with Claude Code's
 * tools (client-child.ts: `rename <old> to <new> in <path>` reads, edits and checks with a
 * command; `read <path> and report`, `run \`cmd\` and report`); any other directive it answers
 * with a report at once. Anything else gets an echo-style report.
 */

const FORK = /^fork\s+(.+)$/i;
const FORK_TIMES = /^fork\s+(\d{1,4})\s+times:\s*(.+)$/i;

/** The MCP fork tool the request declares, or names among Claude Code's deferred tools. */
function mcpForkTool(
  request: Parameters<ScriptedModel['respond']>[0]['request'],
  tools: Set<string>,
): string | undefined {
  const declared = [...tools].find((name) => MCP_FORK_TOOL.test(name));
  if (declared) return declared;
  // In a user turn or, on models that take them, a mid-conversation system turn.
  for (const message of request.messages) {
    if (message.role === 'assistant') continue;
    for (const block of blocksOf(message)) {
      const named = block.type === 'text' ? /\bmcp__[\w-]+?__fork\b/.exec(String(block['text'])) : null;
      if (named) return named[0];
    }
  }
  return undefined;
}

function forkDirectives(line: string): string[] {
  const times = FORK_TIMES.exec(line);
  if (times) {
    const n = Number(times[1]);
    return Array.from({ length: n }, (_, i) => `${times[2]!.trim()} (${i + 1}/${n})`);
  }
  return FORK.exec(line)![1]!
    .split('|')
    .map((d) => d.trim())
    .filter(Boolean);
}
const READ_THEN_RUN = /^read\s+`?([^`\s]+)`?\s+then\s+run\s+`([^`]+)`\s*$/i;
const READ = /^read\s+`?([^`\s]+)`?\s*$/i;

const firstLine = (text: string): string => (text.split('\n').find((l) => l.trim() !== '') ?? '').trim();

function report(scope: string, result: string, issues: string[] = []): ScriptedTurn {
  return {
    content: [{ type: 'text', text: formatReport({ scope, result, keyFiles: [], filesChanged: [], issues }) }],
    stop_reason: 'end_turn',
  };
}

/** The user's own words in a message: its text blocks minus injected reminders. */
function typed(text: string): string {
  return firstLine(text);
}

function isDirective(text: string): boolean {
  const line = typed(text);
  return FORK.test(line) || READ_THEN_RUN.test(line) || READ.test(line);
}

/** Text of the fork child's own task: the last non-reminder text block of the tagged message. */
function forkChildTask(request: Parameters<ScriptedModel['respond']>[0]['request']): string | undefined {
  const tagged = lastUserText(request.messages, (text) => text.includes(FORK_BOILERPLATE_OPEN));
  if (!tagged) return undefined;
  const texts = blocksOf(request.messages[tagged.message]!)
    .filter((b) => b.type === 'text' && !isSystemReminder(String(b['text'])))
    .map((b) => String(b['text']));
  const last = texts[texts.length - 1] ?? '';
  const after = last.includes('</fork-boilerplate>')
    ? last.slice(last.lastIndexOf('</fork-boilerplate>') + '</fork-boilerplate>'.length)
    : last;
  return after.trim() || last.trim();
}

export const claudeCodeModel: ScriptedModel = {
  name: 'claude-code',
  respond({ request }): ScriptedTurn {
    const child = forkChildTask(request);
    if (child !== undefined) {
      const directive = child.replace(/^Directive:\s*/i, '');
      const tagged = lastUserText(request.messages, (text) => text.includes(FORK_BOILERPLATE_OPEN))!;
      const turn = clientChildTurn(
        request,
        directive,
        toolExchanges(request.messages, tagged.message),
        clientShapesOf(request) ?? CLAUDE_CODE_SHAPES,
      );
      if (turn) return turn;
    }
    if (child !== undefined)
      return report(
        firstLine(child.replace(/^Directive:\s*/i, '')) || '(fork child)',
        'done by the claude-code script as a fork child',
      );
    const instruction = lastUserText(request.messages, isDirective);
    if (!instruction) {
      const last = lastUserText(request.messages)?.text ?? '';
      return report(firstLine(last) || '(no user text)', `claude-code script: ${request.messages.length} message(s)`, [
        'unknown directive (known: fork <a> | <b>; read <path> then run `<command>`; read <path>)',
      ]);
    }
    const line = typed(instruction.text);
    const done = toolExchanges(request.messages, instruction.message);
    const tools = declaredTools(request);
    const fork = FORK.exec(line);
    if (fork) {
      const mcpFork = mcpForkTool(request, tools);
      if (mcpFork) {
        // Both clients defer MCP tools: named in a message, its schema read through a search
        // first (Claude Code's ToolSearch loads it; Qwen Code's tool_search only shows it, and
        // the call goes through its tool_call bridge).
        const bridged = !tools.has(mcpFork) && tools.has(QWEN_DEFERRED.call);
        const search = bridged ? QWEN_DEFERRED.search : 'ToolSearch';
        if (!tools.has(mcpFork) && tools.has(search) && !done.some((d) => d.name === search))
          return {
            content: [{ type: 'tool_use', name: search, input: { query: `select:${mcpFork}` } }],
            stop_reason: 'tool_use',
          };
        const call = done.find(
          (d) => d.name === mcpFork || (d.name === QWEN_DEFERRED.call && d.input['name'] === mcpFork),
        );
        if (!call) {
          const input = { directives: forkDirectives(line) };
          return {
            content: [
              { type: 'text', text: `Forking through ${mcpFork}.` },
              bridged
                ? { type: 'tool_use', name: QWEN_DEFERRED.call, input: { name: mcpFork, arguments: input } }
                : { type: 'tool_use', name: mcpFork, input },
            ],
            stop_reason: 'tool_use',
          };
        }
        const reports = (call.result?.text.match(/^## fork \d+ \(completed\)/gm) ?? []).length;
        return report(
          line,
          `${reports} completed fork report(s) came back from ${mcpFork}`,
          call.result?.isError ? [`${mcpFork} failed: ${firstLine(call.result.text)}`] : [],
        );
      }
      if (!tools.has('Agent')) return report(line, 'not done', ['the Agent tool is not declared']);
      if (done.length === 0) {
        const calls: ScriptBlock[] = forkDirectives(line).map((directive, i) => ({
          type: 'tool_use',
          name: 'Agent',
          input: {
            description: `Fork ${i + 1}: ${directive.split(/\s+/).slice(0, 4).join(' ')}`,
            prompt: directive,
            subagent_type: 'fork',
            run_in_background: false,
          },
        }));
        return {
          content: [{ type: 'text', text: `Forking ${calls.length} children.` }, ...calls],
          stop_reason: 'tool_use',
        };
      }
      return report(
        line,
        `${done.length} fork(s) finished`,
        done.filter((d) => d.result?.isError).map((d) => `fork ${d.id} failed`),
      );
    }
    const readThenRun = READ_THEN_RUN.exec(line);
    const read = readThenRun ?? READ.exec(line);
    const path = read![1]!;
    if (done.length === 0)
      return { content: [{ type: 'tool_use', name: 'Read', input: { file_path: path } }], stop_reason: 'tool_use' };
    if (readThenRun && done.length === 1) {
      return {
        content: [
          {
            type: 'tool_use',
            name: 'Bash',
            input: { command: readThenRun[2]!, description: 'Run the requested command' },
          },
        ],
        stop_reason: 'tool_use',
      };
    }
    const issues = done.filter((d) => d.result?.isError).map((d) => `${d.name} failed: ${firstLine(d.result!.text)}`);
    return report(line, done.map((d) => `${d.name}: ${firstLine(d.result?.text ?? '')}`).join('; '), issues);
  },
};
