import { describe, expect, it } from 'vitest';
import { redactor } from '../../../src/core/tools/redact.ts';
import { executorIn, makeSandbox, okContent } from './helpers.ts';

describe('tool results are redacted of secrets (issue 15, case 3)', () => {
  it('replaces every secret, longest first, and leaves short values alone', () => {
    const redact = redactor(['sk-ant-abcdef123456', 'sk-ant-abcdef123456-long', 'test']);
    expect(redact('a sk-ant-abcdef123456-long b sk-ant-abcdef123456 test')).toBe('a [REDACTED] b [REDACTED] test');
  });

  it('removes the common encodings of a secret too (issue 24): reversed, base64 at any offset, URL, hex', () => {
    const key = 'sk-ant-api03-Zx/9+qv_canary-01234567';
    const redact = redactor([key]);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const cases = [
      [...key].reverse().join(''),
      b64(key), // alone
      b64(`A=${key}\n`), // inside a file (offset 2), as `base64 .env` prints it
      b64(`AB=${key}`), // offset 3 = 0
      b64(`X${key}`), // offset 1
      b64(`X${key}`).replace(/\+/g, '-').replace(/\//g, '_'), // URL-safe
      b64(`KEY=${key}`.repeat(3)).replace(/(.{76})/g, '$1\n'), // wrapped at 76 columns
      encodeURIComponent(key),
      encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      Buffer.from(key).toString('hex'),
      Buffer.from(key)
        .toString('hex')
        .toUpperCase()
        .replace(/(.{60})/g, '$1\n'), // xxd -p wraps at 60
    ];
    for (const text of cases) {
      const out = redact(`before ${text} after`);
      expect(out, text).toContain('[REDACTED]');
      expect(out).not.toContain(text.replace(/\n/g, '').slice(4, 20));
    }
    expect(redact('nothing secret here')).toBe('nothing secret here');
  });

  it('finds a form cut by CRLF or LF line breaks anywhere, leaves a text without one as it is, and a secret holding a line break still goes', () => {
    const key = 'sk-ant-api03-line-break-canary-0123456789';
    const redact = redactor([key]);
    const hex = Buffer.from(key).toString('hex');
    for (const cut of ['\n', '\r\n']) {
      for (const at of [1, 7, hex.length - 1]) {
        const text = `x ${hex.slice(0, at)}${cut}${hex.slice(at)} y`;
        expect(redact(text), `${JSON.stringify(cut)} at ${at}`).toBe('x [REDACTED] y');
      }
    }
    // cut in several places at once, every encoded form still goes (the text is first looked at
    // with its line breaks taken out: a form cut anywhere must still be seen there)
    const forms = [hex, hex.toUpperCase(), Buffer.from(key).toString('base64'), [...key].reverse().join('')];
    for (const form of forms) {
      for (const step of [1, 3, 5, 16]) {
        const parts = form.match(new RegExp(`.{1,${step}}`, 'g'))!;
        const cut = parts.map((p, i) => (i === 0 ? p : `${i % 2 ? '\r\n' : '\n'}${p}`)).join('');
        const out = redact(`[${cut}]`);
        expect(out, `${form.slice(0, 12)} every ${step}`).toContain('[REDACTED]');
        expect(out.replace(/[\r\n]/g, '')).not.toContain(form.slice(4, 24));
      }
    }
    // the key's own text broken by a line is no longer the key (plain forms are matched whole)
    expect(redact(`${key.slice(0, 9)}\n${key.slice(9)}`)).toBe(`${key.slice(0, 9)}\n${key.slice(9)}`);
    // a line break that is no part of a form (a bare \r) is kept, and the text around it too
    const other = `sk-ant-api03\r-line-break-canary-0123456789\n${'a'.repeat(64)}\r\n`;
    expect(redact(other)).toBe(other);
    // a configured secret with a line break in it (a PEM-like value) is looked for as written
    const multi = 'first-line-secret\nsecond-line-secret';
    expect(redactor([multi])(`begin ${multi} end`)).toBe('begin [REDACTED] end');
  });

  it('applies to every tool: a file holding the key is read back without it', async () => {
    const sandbox = await makeSandbox();
    try {
      await sandbox.put('.env', 'ANTHROPIC_API_KEY=sk-ant-file-canary-0123456789\n');
      const tools = executorIn(sandbox, { secrets: ['sk-ant-file-canary-0123456789'] });
      expect(okContent(await tools.execute('read_file', { path: '.env' }))).toBe('ANTHROPIC_API_KEY=[REDACTED]\n');
      expect(okContent(await tools.execute('grep', { pattern: 'canary' }))).toBe('.env:1:ANTHROPIC_API_KEY=[REDACTED]');
    } finally {
      await sandbox.cleanup();
    }
  });
  it('refuses the removed `redact` option by name, so a caller that still passes it learns its secrets would go unredacted', async () => {
    const sandbox = await makeSandbox();
    try {
      expect(() => executorIn(sandbox, { redact: ['sk-ant-old-name-0123456789'] } as never)).toThrow(/redact/);
    } finally {
      await sandbox.cleanup();
    }
  });
});
