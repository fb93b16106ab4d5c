import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { forkcache } from './run-cli.ts';

describe('forkcache --help / --version', () => {
  it('prints the version from package.json and the commands', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const version = await forkcache(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
    const help = await forkcache(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['demo', 'run', 'economics', 'emulator', 'report'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    const unknown = await forkcache(['frobnicate']);
    expect(unknown.code).toBe(2);
  });
});
