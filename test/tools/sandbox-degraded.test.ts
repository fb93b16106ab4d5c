import { accessSync, chmodSync, constants, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBubblewrap, probeBubblewrap } from '../../src/tools/bwrap-probe.ts';
import { createToolExecutor } from '../../src/tools/executor.ts';
import { describeSandbox, sandboxLine } from '../../src/tools/sandbox-report.ts';

// Issue 24, route 3: `sandbox: "auto"` on a machine where some protections cannot be applied
// says exactly which did not. Played with a bwrap that refuses user and network namespaces,
// as some kernels and containers do (the probe runs once per process: this file has its own).

const real = findBubblewrapOnHostPath();
let savedPath: string | undefined;

function findBubblewrapOnHostPath(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    try {
      const file = join(dir, 'bwrap');
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

beforeAll(() => {
  if (real === undefined) return;
  const dir = mkdtempSync(join(tmpdir(), 'fc-fake-bwrap-'));
  writeFileSync(
    join(dir, 'bwrap'),
    `#!/bin/sh\nfor a in "$@"; do case "$a" in --unshare-user|--unshare-net) echo "bwrap: No permissions to create a new namespace" >&2; exit 1;; esac; done\nexec ${real} "$@"\n`,
  );
  chmodSync(join(dir, 'bwrap'), 0o755);
  savedPath = process.env['PATH'];
  process.env['PATH'] = `${dir}:${savedPath}`;
});
afterAll(() => {
  if (savedPath !== undefined) process.env['PATH'] = savedPath;
});

describe.runIf(real !== undefined)('a bubblewrap that cannot create user or network namespaces here', () => {
  it('still sandboxes, and names each protection that did not apply, with the reason', async () => {
    const found = probeBubblewrap();
    expect(found).toMatchObject({ userns: false, net: false, disableUserns: false, size: true });
    const report = describeSandbox('auto');
    expect(report.kind).toBe('bwrap');
    expect(report.network).toBe(true); // nothing cuts it: said, not hidden
    expect(report.missing).toEqual(
      expect.arrayContaining([
        'user namespace (bwrap: No permissions to create a new namespace)',
        'network isolation (bwrap: No permissions to create a new namespace)',
      ]),
    );
    expect(sandboxLine(report)).toMatch(/\nnote: NOT applied here: .*user namespace.*network isolation/);
    expect(report.applied).toEqual(expect.arrayContaining(['no capabilities']));
    // the commands do run in it (no capability, PID namespace)
    const tools = createToolExecutor({
      workspace: mkdtempSync(join(tmpdir(), 'fc-ws-')),
      allow: ['bash'],
      sandbox: 'bwrap',
    });
    expect(findBubblewrap()).toMatch(/fc-fake-bwrap-/);
    expect((await tools.execute('bash', { command: 'grep CapEff /proc/self/status; echo $$' })).content).toMatch(
      /CapEff:\s+0+\n\d+\n/,
    );
  });
});
