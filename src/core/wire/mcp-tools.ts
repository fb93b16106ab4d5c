/**
 * How the clients name what `forkcache mcp` serves, as the model sees it: Claude Code and Qwen
 * Code both name an MCP server's tool `mcp__<server>__<tool>`. The proxy captures calls of the
 * fork tool by this name and the emulator's scripted client model makes them: one home for both.
 */
export const MCP_FORK_TOOL = /^mcp__.+__fork$/;

/**
 * Qwen Code's deferred tools (its MCP tools always are): `tool_search` shows a schema, and
 * `tool_call {name, arguments}` runs the named tool with `arguments` unchanged.
 */
export const QWEN_DEFERRED = { call: 'tool_call', search: 'tool_search' } as const;
