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
