import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/tools/redact.ts';
import { executorIn, makeSandbox, okContent } from './helpers.ts';

describe('tool results are redacted of secrets (issue 15, case 3)', () => {
  it('replaces every secret, longest first, and leaves short values alone', () => {
    const redact = redactor(['sk-ant-abcdef123456', 'sk-ant-abcdef123456-long', 'test']);
    expect(redact('a sk-ant-abcdef123456-long b sk-ant-abcdef123456 test')).toBe('a [REDACTED] b [REDACTED] test');
  });

  it('applies to every tool: a file holding the key is read back without it', async () => {
    const sandbox = await makeSandbox();
    try {
      await sandbox.put('.env', 'ANTHROPIC_API_KEY=sk-ant-file-canary-0123456789\n');
      const tools = executorIn(sandbox, { redact: ['sk-ant-file-canary-0123456789'] });
      expect(okContent(await tools.execute('read_file', { path: '.env' }))).toBe('ANTHROPIC_API_KEY=[REDACTED]\n');
      expect(okContent(await tools.execute('grep', { pattern: 'canary' }))).toBe('.env:1:ANTHROPIC_API_KEY=[REDACTED]');
    } finally {
      await sandbox.cleanup();
    }
  });
});
