import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { terminalPermissionHandler } from '../../src/cli/permission-prompt.ts';

const request = { forkId: 'f01', tool: 'edit_file', input: { path: 'a.ts' } };

describe('terminalPermissionHandler', () => {
  it('allows everything with --allow-asks and denies without a terminal', async () => {
    expect(await terminalPermissionHandler({ allowAll: true })(request)).toEqual({
      allow: true,
      reason: 'allowed by --allow-asks',
    });
    const notTty = Object.assign(new PassThrough(), { isTTY: false });
    expect(await terminalPermissionHandler({ allowAll: false, input: notTty })(request)).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/--allow-asks/),
    });
  });

  it('asks one question at a time on a terminal and reads y/N', async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString()));
    const ask = terminalPermissionHandler({ allowAll: false, input, output });
    const first = ask(request);
    const second = ask({ ...request, forkId: 'f02' });
    await new Promise((r) => setImmediate(r));
    expect(shown).toContain('f01 wants to run edit_file {"path":"a.ts"}. Allow? [y/N]');
    expect(shown).not.toContain('f02');
    input.write('y\n');
    expect(await first).toEqual({ allow: true });
    await new Promise((r) => setImmediate(r));
    expect(shown).toContain('f02 wants to run edit_file');
    input.write('\n');
    expect(await second).toEqual({ allow: false, reason: 'refused at the terminal' });
  });
});
