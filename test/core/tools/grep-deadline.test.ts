import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, executorIn, makeSandbox, okContent, type Sandbox } from './helpers.ts';

// Issue 15, case 2: grep ran the model's regex with RegExp on the worker thread: `(a+)+$` on a
// 27-character line took 13 s, on 41 characters the thread sat at 100% CPU and could not be
// cancelled. No wall-clock assertion here: before the fix this test never finishes (vitest's
// timeout fails it); bench/ has no place for a hang.

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
});
afterEach(() => sandbox.cleanup());

describe('grep cannot hang a fork (issue 15, case 2)', () => {
  it('answers a catastrophic-backtracking pattern on long lines (linear-time matching)', async () => {
    await sandbox.put('evil.txt', `${'a'.repeat(41)}b\n${'a'.repeat(5000)}!\nplain line\n`);
    expect(okContent(await executorIn(sandbox).execute('grep', { pattern: '(a+)+$' }))).toBe('No matches.');
    expect(okContent(await executorIn(sandbox).execute('grep', { pattern: '(a|aa)+!$' }))).toMatch(/^evil\.txt:2:a+…$/);
  });

  it('refuses lookaround and backreferences with a message saying why', async () => {
    const tools = executorIn(sandbox);
    for (const pattern of ['foo(?=bar)', '(a)\\1']) {
      const error = errorOf(await tools.execute('grep', { pattern }));
      expect(error.code).toBe('TOOL_BAD_PATTERN');
      expect(error.content).toMatch(/RE2 syntax: no lookaround, no backreferences/);
    }
  });

  it('stops a call at its deadline with TOOL_TIMEOUT (every tool but bash, which has its own)', async () => {
    for (let i = 0; i < 400; i++) await sandbox.put(`d${i % 20}/f${i}.txt`, 'needle\n'.repeat(50));
    const error = errorOf(
      await executorIn(sandbox, { limits: { toolTimeoutMs: 1 } }).execute('grep', { pattern: 'needle' }),
    );
    expect(error).toEqual({
      code: 'TOOL_TIMEOUT',
      content: 'grep did not finish within 1 ms and was stopped; narrow the path, glob or pattern',
    });
  });

  it('returns at once when the fork is cancelled mid-call', async () => {
    for (let i = 0; i < 200; i++) await sandbox.put(`f${i}.txt`, 'needle\n'.repeat(50));
    const controller = new AbortController();
    const call = executorIn(sandbox).execute('grep', { pattern: 'needle' }, { signal: controller.signal });
    controller.abort(new Error('fork cancelled'));
    await expect(call).rejects.toThrow('fork cancelled');
  });
});
