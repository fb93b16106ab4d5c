// The Claude Agent SDK's query() with forkcache's MCP server: the config the proxy wrote
// (`forkcache proxy --mcp --mcp-config FILE`) is its `mcpServers`; ANTHROPIC_BASE_URL (the
// proxy) goes to the Claude Code it starts through `env`.
//   node agent-sdk.mjs AGENT_SDK_DIR MCP_CONFIG "prompt"
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [sdkDir, configFile, prompt] = process.argv.slice(2);
const { query } = await import(pathToFileURL(join(sdkDir, 'sdk.mjs')).href);
const { mcpServers } = JSON.parse(readFileSync(configFile, 'utf8'));
let result;
for await (const message of query({
  prompt,
  options: {
    cwd: process.cwd(),
    maxTurns: 6,
    mcpServers,
    allowedTools: ['mcp__forkcache__fork', 'ToolSearch'],
    env: { ...process.env },
  },
})) {
  if (message.type === 'result') result = message;
}
console.log(result?.result ?? JSON.stringify(result));
process.exit(result && !result.is_error ? 0 : 1);
