import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { emulator, proxy, sdk, until } from './helpers.ts';
import { rawUpstream, type RawUpstream } from './raw-upstream.ts';

/*
 * Deep JSON on the other paths: JSON.parse accepts 20,000 levels, but writing it back out
 * (JSON.stringify) overflows the stack. The exchange logs of the proxy and of the emulator did
 * exactly that, in a callback: an uncaught exception that kills the process. An upstream's
 * deep `cache_miss_reason` would reach the proxy's log and `--json` the same way.
 */

const dirs: string[] = [];
const upstreams: RawUpstream[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'fc-deep-'));
  dirs.push(d);
  return d;
};
const nest = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('deep JSON through the proxy and into the logs', () => {
  it('a 20,000-deep body: 400 from the emulator, through the proxy; both logs keep it as text', async () => {
    const emuLog = tmp();
    const pxLog = tmp();
    const emu = await emulator({ logDir: emuLog });
    const px = await proxy({ upstream: emu.url, logDir: pxLog });
    const body = `{"model":"claude-opus-5-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":{"x":${nest(20_000)}}}`;
    const res = await fetch(`${px.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/nested deeper than 256/);
    await until(() => px.ledger.records().length === 1, 'recorded');
    await px.close();
    await emu.close();
    const pxLines = readFileSync(join(pxLog, 'exchanges.jsonl'), 'utf8').trim().split('\n');
    expect(pxLines).toHaveLength(2);
    expect((JSON.parse(pxLines[0]!) as { body: unknown }).body).toBe(body);
    const [file] = readdirSync(emuLog);
    expect((JSON.parse(readFileSync(join(emuLog, file!), 'utf8')) as { request: { body: unknown } }).request.body).toBe(
      body,
    );
  });

  it("an upstream's 20,000-deep cache_miss_reason is not kept: the record and the log are written", async () => {
    const message = `{"id":"msg_d","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1},"diagnostics":{"cache_miss_reason":{"deep":${nest(20_000)}}}}`;
    const upstream = await rawUpstream([
      (s) =>
        s.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
        ),
    ]);
    upstreams.push(upstream);
    const log = tmp();
    const px = await proxy({ upstream: upstream.url, logDir: log });
    const answer = await sdk(px.url).messages.create({
      model: 'claude-opus-5-5',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.id).toBe('msg_d');
    await until(() => px.ledger.records().length === 1, 'recorded');
    expect(px.ledger.records()[0]).toMatchObject({
      status: 200,
      apiMissReason: undefined,
      usage: { output_tokens: 1 },
    });
    expect(JSON.stringify(px.summary())).toContain('"total":1');
    const lines = readFileSync(join(log, 'exchanges.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['request', 'response']);
  });
});
