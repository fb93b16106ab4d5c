import { ForkcacheError } from '../../util/errors.ts';
import { CLAUDE_CODE_TOOL_SET } from './claude-code.ts';
import { FORKCACHE_TOOL_SET } from './forkcache.ts';
import { QWEN_CODE_TOOL_SET } from './qwen-code.ts';
import { TOOL_SET_NAMES, type ToolSet, type ToolSetChoice, type ToolSetName } from './types.ts';

export const TOOL_SETS: Readonly<Record<ToolSetName, ToolSet>> = {
  forkcache: FORKCACHE_TOOL_SET,
  'claude-code': CLAUDE_CODE_TOOL_SET,
  'qwen-code': QWEN_CODE_TOOL_SET,
};

/** A declared tool as a parent's array holds it: Anthropic (`name`) or Chat Completions (`function.name`). */
export type DeclaredTool = object;

type Declared = { readonly name?: unknown; readonly input_schema?: unknown; readonly function?: unknown };

export function declaredName(declared: DeclaredTool): string {
  const tool = declared as Declared;
  if (typeof tool.name === 'string') return tool.name;
  const fn = tool.function as { name?: unknown } | undefined;
  return typeof fn?.name === 'string' ? fn.name : '';
}

function declaredProperties(declared: DeclaredTool): readonly string[] {
  const tool = declared as Declared;
  const fn = tool.function as { parameters?: unknown } | undefined;
  const schema = (tool.input_schema ?? fn?.parameters) as { properties?: unknown } | undefined;
  return schema?.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
}

function knows(set: ToolSet, name: string): boolean {
  return set.tools.has(name) || set.spawn.includes(name) || refusalOf(set, name) !== undefined;
}

/**
 * Why a fork may not run `name`, if it is one of the set's refused tools or an MCP tool
 * (`mcp__<server>__<tool>`: its server is the client's, which a fork does not reach; forkcache's
 * own `fork` tool among them, whose call from a fork would be a fork of a fork).
 */
export function refusalOf(set: ToolSet, name: string): string | undefined {
  if (Object.hasOwn(set.refused, name)) return set.refused[name];
  if (/^mcp__.+__.+/.test(name))
    return "MCP tools run in the client's own MCP servers, which a fork does not reach: do the work with the other tools";
  return undefined;
}

/**
 * The tool set whose tools the parent declares. Names alone do not decide it: Qwen Code's
 * `read_file` and `glob` are forkcache's names with other schemas, so a `read_file` taking
 * `file_path` is Qwen Code's. Otherwise the set that knows most of the declared names wins,
 * forkcache's own on a tie (and for an empty array).
 */
export function detectToolSet(tools: readonly DeclaredTool[]): ToolSetName {
  const readFile = tools.find((t) => declaredName(t) === 'read_file');
  if (readFile) return declaredProperties(readFile).includes('file_path') ? 'qwen-code' : 'forkcache';
  let best: ToolSetName = 'forkcache';
  let bestCount = 0;
  for (const name of TOOL_SET_NAMES) {
    const count = tools.filter((t) => knows(TOOL_SETS[name], declaredName(t))).length;
    if (count > bestCount) [best, bestCount] = [name, count];
  }
  return best;
}

export function resolveToolSet(choice: ToolSetChoice | undefined, tools: readonly DeclaredTool[]): ToolSet {
  if (choice === undefined || choice === 'auto') return TOOL_SETS[detectToolSet(tools)];
  const set = TOOL_SETS[choice as ToolSetName] as ToolSet | undefined;
  if (!set)
    throw new ForkcacheError(
      'INVALID_OPTION',
      `toolSet: ${JSON.stringify(choice)} is not one of auto, ${TOOL_SET_NAMES.join(', ')}`,
    );
  return set;
}

/**
 * Tools of any set that only read. A name is never read-only in one set and has effects in
 * another (a test checks), so resume can tell from the name alone which interrupted call it
 * may run again.
 */
export const READ_ONLY_CLIENT_TOOL_NAMES: ReadonlySet<string> = new Set(
  Object.values(TOOL_SETS).flatMap((set) => [...set.tools.values()].filter((t) => t.readOnly).map((t) => t.name)),
);
