import { TOOL_NAMES } from '../../../core/wire/tool-names.ts';
import type { MessagesRequest, ToolDefinition } from '../types.ts';
import { findForkDirective, lastUserText, toolExchanges } from './conversation.ts';
import { formatReport } from './directive.ts';
import type { ScriptedModel, ScriptedTurn } from './types.ts';

/**
 * Tools the script never calls: forkcache's own, and the tools that spawn agents (a fork may
 * not fork again: the recursion guard would refuse it, and the script is not testing that).
 */
const SKIPPED: ReadonlySet<string> = new Set([...TOOL_NAMES, 'fork', 'Agent', 'Task']);

/** The tools of the request's array that someone other than forkcache runs, in declaration order. */
function foreignTools(request: Readonly<MessagesRequest>): ToolDefinition[] {
  return (request.tools ?? [])
    .filter((t) => t.type === undefined || t.type === 'custom')
    .filter((t) => !SKIPPED.has(t.name));
}

type Schema = Record<string, unknown>;

/**
 * A value that satisfies a JSON schema, as a model would fill it in: the first enum or const,
 * a string naming the task, the minimum of a number, one item of an array, every property of
 * an object (required or not). Enough for the schemas tools declare; not a JSON Schema solver.
 */
export function sampleInput(schema: Schema | undefined, text: string): unknown {
  if (!schema) return {};
  if (Array.isArray(schema['enum'])) return schema['enum'][0];
  if ('const' in schema) return schema['const'];
  for (const key of ['anyOf', 'oneOf'] as const)
    if (Array.isArray(schema[key])) return sampleInput(schema[key][0] as Schema, text);
  const type = Array.isArray(schema['type']) ? (schema['type'] as unknown[]).find((t) => t !== 'null') : schema['type'];
  switch (type) {
    case 'string':
      return text.slice(0, typeof schema['maxLength'] === 'number' ? schema['maxLength'] : 200);
    case 'number':
    case 'integer':
      return typeof schema['minimum'] === 'number' ? schema['minimum'] : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const min = typeof schema['minItems'] === 'number' ? Math.max(1, schema['minItems']) : 1;
      return Array.from({ length: min }, () => sampleInput(schema['items'] as Schema | undefined, text));
    }
    default: {
      const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
      return Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, sampleInput(sub, text)]));
    }
  }
}

const firstLine = (text: string): string => (text.split('\n').find((l) => l.trim() !== '') ?? '').trim();

/**
 * `host-tools`: calls every tool the request declares that forkcache does not run itself
 * (an embedder's `search_tickets`, an AI SDK app's tools), one per turn in declaration order,
 * with inputs built from their input schemas and the directive's words; then reports what each
 * returned (done, a failed call named under Issues: the script does not judge the host's errors). A fork child works from its directive, anything else from the last user text. It
 * exercises the host-tool round trip the way a model would: a tool's result is read before
 * the next call.
 */
export const hostToolsModel: ScriptedModel = {
  name: 'host-tools',
  respond({ request }): ScriptedTurn {
    const fork = findForkDirective(request.messages);
    const task =
      fork ??
      (() => {
        const user = lastUserText(request.messages);
        return user && { directive: user.text, message: user.message };
      })();
    const directive = firstLine(task?.directive ?? '') || '(no task)';
    const calls = toolExchanges(request.messages, task?.message ?? 0);
    const next = foreignTools(request).find((tool) => !calls.some((c) => c.name === tool.name));
    if (next) {
      return {
        content: [
          { type: 'text', text: `Calling ${next.name}.` },
          {
            type: 'tool_use',
            name: next.name,
            input: sampleInput(next.input_schema, directive) as Record<string, unknown>,
          },
        ],
      };
    }
    const failed = calls.filter((c) => c.result?.isError);
    const text = formatReport({
      scope: directive,
      result:
        calls.length === 0
          ? 'done: no tools of the host to call'
          : `done: ${calls.map((c) => `${c.name} → ${firstLine(c.result?.text ?? '(no result)').slice(0, 120)}`).join('; ')}`,
      keyFiles: [],
      filesChanged: [],
      issues: failed.map((c) => `${c.name} failed: ${firstLine(c.result?.text ?? '')}`),
    });
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};
