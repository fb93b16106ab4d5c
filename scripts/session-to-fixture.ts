// Turn one real Claude Code session run against `forkcache emulator --log-dir` into a fixture:
// its transcript JSONL (+ subagent files) and the wire requests the emulator logged for it,
// scrubbed of keys, session/device ids and local paths (the same rules as clients-to-fixtures).
//   npx tsx scripts/session-to-fixture.ts SESSION.jsonl LOGS_DIR WORK_DIR OUT_DIR
// The emulator's thinking signatures cover the conversation text, so the wire bodies are
// re-signed after scrubbing and the transcript gets the same new signatures (old -> new map),
// keeping transcript and wire byte-equal where they were.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { signThinking } from '../src/integrations/emulator/request/thinking-binding.ts';
import type { RequestMessage } from '../src/integrations/emulator/types.ts';
import { findModel } from '../src/core/models/catalogue.ts';

const [session, logs, work, out] = process.argv.slice(2);
if (!session || !logs || !work || !out) {
  console.error('usage: session-to-fixture.ts SESSION.jsonl LOGS_DIR WORK_DIR OUT_DIR');
  process.exit(2);
}
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ids = new Map<string, string>();
const scrub = (text: string): string =>
  text
    .split(join(work, 'project'))
    .join('/home/user/project')
    .split(work)
    .join('/home/user')
    .split(join(work, 'project').replace(/[/.]/g, '-'))
    .join('-home-user-project')
    .replace(/OS Version: Linux [^\\"]*/g, 'OS Version: Linux 6.1.0')
    .replace(/"osVersion":"Linux [^"]*"/g, '"osVersion":"Linux 6.1.0"')
    .replace(/sk-ant-[A-Za-z0-9_-]+/g, 'sk-ant-REDACTED')
    .replace(/\\"device_id\\":\\"[0-9a-f]{64}\\"/g, '\\"device_id\\":\\"' + '0'.repeat(64) + '\\"')
    .replace(UUID, (id) => {
      if (!ids.has(id)) ids.set(id, `00000000-0000-4000-8000-${String(ids.size + 1).padStart(12, '0')}`);
      return ids.get(id)!;
    });

const signatures = new Map<string, string>();
function resign(body: { model?: string; messages?: RequestMessage[] }): void {
  const model = body.model && findModel(body.model)?.id;
  if (!model || !Array.isArray(body.messages)) return;
  body.messages.forEach((message, i) => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    for (const block of message.content) {
      if (block.type !== 'thinking') continue;
      const fresh = signThinking(model, body.messages!.slice(0, i), String(block['thinking']));
      signatures.set(String(block['signature']), fresh);
      block['signature'] = fresh;
    }
  });
}

mkdirSync(join(out, 'wire'), { recursive: true });
// Scrub the transcript first so the session id becomes placeholder 1 everywhere.
const transcript = scrub(readFileSync(session, 'utf8'));
const wire = readdirSync(logs)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f, i) => {
    const x = JSON.parse(scrub(readFileSync(join(logs, f), 'utf8')));
    if (x.request.body && typeof x.request.body === 'object') resign(x.request.body);
    return { name: `${String(i + 1).padStart(2, '0')}.json`, exchange: { body: x.request.body, cache: x.cache } };
  });
const resigned = (text: string): string => [...signatures].reduce((t, [from, to]) => t.split(from).join(to), text);
writeFileSync(join(out, 'session.jsonl'), resigned(transcript));
for (const { name, exchange } of wire) writeFileSync(join(out, 'wire', name), `${JSON.stringify(exchange, null, 1)}\n`);
const sub = join(session.replace(/\.jsonl$/, ''), 'subagents');
if (existsSync(sub)) {
  mkdirSync(join(out, 'session', 'subagents'), { recursive: true });
  for (const f of readdirSync(sub))
    writeFileSync(
      join(out, 'session', 'subagents', scrub(basename(f))),
      resigned(scrub(readFileSync(join(sub, f), 'utf8'))),
    );
}
console.error(`${out}: transcript, ${wire.length} wire request(s)`);
