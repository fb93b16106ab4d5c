import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cc, client, emulator, rawPost, words } from './helpers.ts';

/*
 * What a user pointing a real client at the emulator relies on: the billing header block is
 * metadata, ids never repeat across restarts (unless seeded), `echo` reads the user's words,
 * and --log-dir shows every exchange with keys masked and the cache plan.
 */

const MODEL = 'claude-opus-5-5';
const billing = (session: string) => ({
  type: 'text',
  text: `x-anthropic-billing-header: cc_version=2.1.332.abc; cc_entrypoint=cli; cch=${session};`,
});
const body = (session: string): string =>
  JSON.stringify({
    model: MODEL,
    max_tokens: 100,
    system: [billing(session), { type: 'text', text: words(30, 's'), cache_control: cc }],
    messages: [{ role: 'user', content: [{ type: 'text', text: words(10, 'u'), cache_control: cc }] }],
  });

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the billing header block', () => {
  it('is left out of the cache key and the token counts', async () => {
    const emu = await emulator();
    const first = (await (await rawPost(emu, '/v1/messages', body('one'))).json()) as { usage: Record<string, number> };
    expect(first.usage).toMatchObject({ cache_creation_input_tokens: 40, cache_read_input_tokens: 0, input_tokens: 0 });
    const second = (await (await rawPost(emu, '/v1/messages', body('two'))).json()) as {
      usage: Record<string, number>;
    };
    expect(second.usage).toMatchObject({ cache_read_input_tokens: 40, cache_creation_input_tokens: 0 });
    const { max_tokens: _, ...countable } = JSON.parse(body('three')) as Record<string, unknown>;
    const counted = (await (await rawPost(emu, '/v1/messages/count_tokens', JSON.stringify(countable))).json()) as {
      input_tokens: number;
    };
    expect(counted.input_tokens).toBe(40);
  });

  it('is hashed and counted with cacheBillingBlock', async () => {
    for (const options of [{ cacheBillingBlock: true }]) {
      const emu = await emulator(options);
      await rawPost(emu, '/v1/messages', body('one'));
      const second = (await (await rawPost(emu, '/v1/messages', body('two'))).json()) as {
        usage: Record<string, number>;
      };
      expect(second.usage['cache_read_input_tokens'], JSON.stringify(options)).toBe(0);
      expect(second.usage['cache_creation_input_tokens']).toBeGreaterThan(40);
    }
  });

  it('refuses the removed name strictBillingBlock by name', async () => {
    await expect(emulator({ strictBillingBlock: true } as never)).rejects.toThrow(/strictBillingBlock/);
  });
});

describe('ids', () => {
  it('never repeat across restarts unless a seed is given', async () => {
    const firstId = async (seed?: number): Promise<[string, string]> => {
      const emu = await emulator(seed === undefined ? {} : { seed });
      const res = await rawPost(emu, '/v1/messages', body('x'));
      const id = ((await res.json()) as { id: string }).id;
      await emu.destroy();
      return [id, res.headers.get('request-id')!];
    };
    const [a, b] = [await firstId(), await firstId()];
    expect(a[0]).not.toBe(b[0]);
    expect(a[1]).not.toBe(b[1]);
    expect(await firstId(7)).toEqual(await firstId(7));
  });
});

describe('echo', () => {
  it("reports the user's last words, not an injected <system-reminder>", async () => {
    const api = client(await emulator());
    const msg = await api.messages.create({
      model: MODEL,
      max_tokens: 300,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>\nContext the client injected\n</system-reminder>' },
            { type: 'text', text: 'say hi' },
          ],
        },
      ],
    });
    const text = msg.content.find((b) => b.type === 'text');
    expect(text && 'text' in text ? text.text : '').toContain('Scope: say hi');
  });
});

describe('--log-dir', () => {
  it('writes one JSON file per exchange: request, masked keys, response body or SSE, cache plan', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'forkcache-log-'));
    dirs.push(logDir);
    const emu = await emulator({ logDir });
    await rawPost(emu, '/v1/messages', body('one'), { 'x-api-key': 'sk-ant-secret-123' });
    const streamed = JSON.stringify({ ...JSON.parse(body('two')), stream: true });
    await (
      await rawPost(emu, '/v1/messages?beta=true', streamed, { authorization: 'Bearer sk-ant-secret-456' })
    ).text();
    await rawPost(emu, '/v1/messages', '{"model": 1}');
    await emu.close();
    const files = readdirSync(logDir).sort();
    expect(files).toHaveLength(3);
    const [plain, sse, bad] = files.map((f) => JSON.parse(readFileSync(join(logDir, f), 'utf8')));
    expect(JSON.stringify([plain, sse])).not.toContain('secret');
    expect(plain.request).toMatchObject({
      method: 'POST',
      url: '/v1/messages',
      headers: { 'x-api-key': '****-123' },
      body: { model: MODEL },
    });
    expect(plain.response).toMatchObject({ status: 200, body: { type: 'message' } });
    expect(plain.cache).toMatchObject({
      read: null,
      writes: [
        { path: 'system.1', tokens: 30 },
        { path: 'messages.0.content.0', tokens: 40 },
      ],
      billingBlockIgnored: true,
    });
    expect(sse.request.headers.authorization).toBe('Bearer ****-456');
    expect(sse.response.body).toContain('event: message_stop');
    expect(sse.cache.read).toEqual({ path: 'messages.0.content.0', tokens: 40 });
    expect(bad.response.status).toBe(400);
    expect(bad.cache).toBeNull();
  });
});
