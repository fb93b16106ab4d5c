// Turn the emulator's exchange log of one Qwen Code run into the scrubbed fixtures of
// test/fixtures/qwen-code-openai/: the request (body and the headers that matter), the status
// and the usage the emulator answered with. Local paths and the session id are replaced.
//   node --import tsx scripts/qwen-code-openai-fixtures.ts LOG_DIR WORK_DIR OUT_DIR
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [logDir, work, out] = process.argv.slice(2);
if (!logDir || !work || !out) throw new Error('usage: qwen-code-openai-fixtures.ts LOG_DIR WORK_DIR OUT_DIR');
const KEPT_HEADERS = [
  'content-type',
  'user-agent',
  'x-dashscope-authtype',
  'x-dashscope-cachecontrol',
  'x-dashscope-useragent',
  'x-stainless-package-version',
];
const NAMES = ['01-main-turn.json', '02-memory-extractor.json'];
const SESSION = '00000000-0000-4000-8000-000000000001';

const scrub = (text: string): string =>
  text
    .split(join(work, 'home'))
    .join('/home/user')
    .split(join(work, 'project').replaceAll('/', '-'))
    .join('-workspace-project')
    .split(join(work, 'project'))
    .join('/workspace/project')
    .replaceAll('../home/.qwen', '~/.qwen');

const files = readdirSync(logDir)
  .filter((f) => f.endsWith('.json'))
  .sort();
files.slice(0, NAMES.length).forEach((file, i) => {
  const record = JSON.parse(readFileSync(join(logDir, file), 'utf8'));
  const body = record.request.body;
  const session = String(body.metadata?.sessionId ?? '');
  const usageLine = String(record.response.body)
    .split('\n')
    .filter((l) => l.startsWith('data: {') && l.includes('"usage":{'))
    .pop();
  const fixture = {
    recorded:
      'Qwen Code 0.24.4 (-p, --auth-type openai) against forkcache emulator --api dashscope; paths and session id scrubbed',
    request: {
      method: record.request.method,
      url: record.request.url,
      headers: Object.fromEntries(
        KEPT_HEADERS.filter((h) => record.request.headers[h] !== undefined).map((h) => [h, record.request.headers[h]]),
      ),
      body,
    },
    response: { status: record.response.status, usage: usageLine ? JSON.parse(usageLine.slice(6)).usage : null },
  };
  const text = scrub(JSON.stringify(fixture, null, 1))
    .split(session || '\u0000')
    .join(SESSION);
  writeFileSync(join(out, NAMES[i]!), `${text}\n`);
  process.stdout.write(`${NAMES[i]} <- ${file}\n`);
});
