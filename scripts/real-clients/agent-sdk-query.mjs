// The Claude Agent SDK's query() against the emulator (ANTHROPIC_BASE_URL): exits 0 on a
// successful result. `node agent-sdk-query.mjs CLIENTS_DIR "prompt" [model]`, where CLIENTS_DIR
// holds node_modules/@anthropic-ai/claude-agent-sdk (installed by scripts/real-clients.sh).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [clients, prompt = 'say hi', model] = process.argv.slice(2);
const require = createRequire(join(clients, 'package.json'));
const { query } = await import(pathToFileURL(require.resolve('@anthropic-ai/claude-agent-sdk')).href);
let result;
for await (const message of query({
  prompt,
  options: { cwd: process.cwd(), maxTurns: 4, ...(model ? { model } : {}) },
})) {
  if (message.type === 'result') result = message;
}
console.log(JSON.stringify({ subtype: result?.subtype, is_error: result?.is_error, result: result?.result }));
process.exit(result && !result.is_error ? 0 : 1);
