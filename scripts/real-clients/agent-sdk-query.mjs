// The Claude Agent SDK's query() against the emulator (ANTHROPIC_BASE_URL): exits 0 on a
// successful result. `node agent-sdk-query.mjs CLIENTS_DIR "prompt" [model]`, where CLIENTS_DIR
// holds node_modules/@anthropic-ai/claude-agent-sdk (installed by scripts/real-clients.sh), or is
// the SDK's own folder (`claude-code/VERSION/agent-sdk` of scripts/clients/setup.sh's cache).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [clients, prompt = 'say hi', model] = process.argv.slice(2);
const require = createRequire(join(clients, 'package.json'));
const entry = existsSync(join(clients, 'sdk.mjs'))
  ? join(clients, 'sdk.mjs')
  : require.resolve('@anthropic-ai/claude-agent-sdk');
const { query } = await import(pathToFileURL(entry).href);
let result;
for await (const message of query({
  prompt,
  options: { cwd: process.cwd(), maxTurns: 4, ...(model ? { model } : {}) },
})) {
  if (message.type === 'result') result = message;
}
console.log(JSON.stringify({ subtype: result?.subtype, is_error: result?.is_error, result: result?.result }));
process.exit(result && !result.is_error ? 0 : 1);
