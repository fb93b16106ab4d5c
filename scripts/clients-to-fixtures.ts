// Turn the emulator's --log-dir captures of real clients into test fixtures: one JSON file per
// scenario under test/fixtures/clients/, with keys, session and device ids and local paths
// scrubbed. `npx tsx scripts/clients-to-fixtures.ts LOGS_DIR OUT_DIR PROJECT_DIR WORK_DIR
// [CLIENTS_CACHE]` (scripts/real-clients.sh runs it; CLIENTS_CACHE: scripts/clients/setup.sh's
// folder, when the clients ran from there). Thinking-block signatures are the emulator's own and
// cover the conversation text, so they are re-signed after scrubbing, or replays would fail
// the binding check for a reason the client never caused.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signThinking } from '../src/integrations/emulator/request/thinking-binding.ts';
import type { RequestMessage } from '../src/integrations/emulator/types.ts';
import { findModel } from '../src/core/models/catalogue.ts';

const [logs, out, project, work, cache] = process.argv.slice(2);
if (!logs || !out || !project || !work) {
  console.error('usage: clients-to-fixtures.ts LOGS_DIR OUT_DIR PROJECT_DIR WORK_DIR');
  process.exit(2);
}

const KEEP_HEADERS = ['anthropic-version', 'anthropic-beta', 'content-type', 'user-agent', 'x-app'];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

// The clients' install may be a link elsewhere; its real path shows up in their messages.
const modules = join(work, 'clients', 'node_modules');
const realModules = existsSync(modules) ? realpathSync(modules) : modules;
const realCache = cache === undefined ? undefined : realpathSync(cache);

/** Same id in, same placeholder out (per scenario), so equal ids stay equal. */
function scrubber(): (text: string) => string {
  const ids = new Map<string, string>();
  return (text) =>
    (realCache === undefined ? text : text.split(realCache).join('/home/user/clients'))
      .split(realModules)
      .join('/home/user/clients/node_modules')
      .split(project!)
      .join('/home/user/project')
      .split(work!)
      .join('/home/user')
      // Claude Code and Qwen Code name per-project directories after the path, slashes as dashes.
      .split(project!.replace(/[/.]/g, '-'))
      .join('-home-user-project')
      .replace(/OS Version: Linux [^\\"]*/g, 'OS Version: Linux 6.1.0')
      .replace(/sk-ant-[A-Za-z0-9_-]+/g, 'sk-ant-REDACTED')
      .replace(/\\"device_id\\":\\"[0-9a-f]{64}\\"/g, '\\"device_id\\":\\"' + '0'.repeat(64) + '\\"')
      .replace(UUID, (id) => {
        if (!ids.has(id)) ids.set(id, `00000000-0000-4000-8000-${String(ids.size + 1).padStart(12, '0')}`);
        return ids.get(id)!;
      });
}

function resign(body: { model?: string; messages?: RequestMessage[] }): void {
  const model = body.model && findModel(body.model)?.id;
  if (!model || !Array.isArray(body.messages)) return;
  body.messages.forEach((message, i) => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    for (const block of message.content) {
      if (
        block.type === 'thinking' &&
        Buffer.from(String(block['signature']), 'base64').toString().startsWith('fcemu1.')
      ) {
        block['signature'] = signThinking(model, body.messages!.slice(0, i), String(block['thinking']));
      }
    }
  });
}

for (const scenario of readdirSync(logs)
  .filter((n) => statSync(join(logs, n)).isDirectory())
  .sort()) {
  const scrub = scrubber();
  const exchanges = readdirSync(join(logs, scenario))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(scrub(readFileSync(join(logs, scenario, f), 'utf8'))))
    .map((x) => {
      const headers = Object.fromEntries(
        KEEP_HEADERS.filter((h) => x.request.headers[h] !== undefined).map((h) => [h, x.request.headers[h]]),
      );
      const auth = x.request.headers['authorization'] ? 'bearer' : 'x-api-key';
      if (x.request.body && typeof x.request.body === 'object') resign(x.request.body);
      const u = x.cache?.usage;
      return {
        method: x.request.method,
        url: x.request.url,
        auth,
        headers,
        body: x.request.body,
        status: x.response.status,
        // As measured live; local paths and the kernel version were scrubbed since, so a replay
        // matches positions exactly and token counts to within a few tokens.
        cache: x.cache && {
          read: x.cache.read?.path ?? null,
          writes: x.cache.writes.map((w: { path: string }) => w.path),
          input_tokens: u.input_tokens,
          cache_creation_input_tokens: u.cache_creation_input_tokens,
          cache_read_input_tokens: u.cache_read_input_tokens,
        },
      };
    });
  const client = readFileSync(join(logs, `${scenario}.client.txt`), 'utf8')
    .split('\n')
    .slice(0, 8)
    .join('\n');
  // The scripted model the emulator ran: a replay must answer alike for the next request to match.
  const script = readFileSync(join(logs, `${scenario}.script`), 'utf8').trim();
  const command = readFileSync(join(logs, `${scenario}.command`), 'utf8').trim();
  writeFileSync(
    join(out, `${scenario}.json`),
    `${JSON.stringify({ scenario, command: scrub(command), script, clientOutput: scrub(client), exchanges }, null, 1)}\n`,
  );
  console.error(`${scenario}: ${exchanges.length} exchange(s)`);
}
