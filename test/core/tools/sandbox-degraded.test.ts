import { accessSync, chmodSync, constants, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Issue 24, route 3: `sandbox: "auto"` on a machine where some protections cannot be applied
// says exactly which did not. Played with a bwrap that refuses user and network namespaces,
// as some kernels and containers do. The probe runs once per thread and keeps its answer, and
// unit files share their worker's modules (vitest.config.ts): this file loads the sandbox
// modules afresh after the fake is on PATH, and leaves fresh ones behind, so the fake's answer
// is neither one an earlier file probed nor one a later file sees.
let probe: typeof import('../../../src/core/tools/sandbox/bwrap-probe.ts');
let executor: typeof import('../../../src/core/tools/executor.ts');
let sandboxReport: typeof import('../../../src/core/tools/sandbox/report.ts');

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

beforeAll(async () => {
  if (real === undefined) return;
  const dir = mkdtempSync(join(tmpdir(), 'fc-fake-bwrap-'));
  writeFileSync(
    join(dir, 'bwrap'),
    `#!/bin/sh\nfor a in "$@"; do case "$a" in --unshare-user|--unshare-net) echo "bwrap: No permissions to create a new namespace" >&2; exit 1;; esac; done\nexec ${real} "$@"\n`,
  );
  chmodSync(join(dir, 'bwrap'), 0o755);
  savedPath = process.env['PATH'];
  process.env['PATH'] = `${dir}:${savedPath}`;
  vi.resetModules();
  probe = await import('../../../src/core/tools/sandbox/bwrap-probe.ts');
  executor = await import('../../../src/core/tools/executor.ts');
  sandboxReport = await import('../../../src/core/tools/sandbox/report.ts');
});
afterAll(() => {
  if (savedPath !== undefined) process.env['PATH'] = savedPath;
  vi.resetModules();
});

describe.runIf(real !== undefined)('a bubblewrap that cannot create user or network namespaces here', () => {
  it('still sandboxes, and names each protection that did not apply, with the reason', async () => {
    const { findBubblewrap, probeBubblewrap } = probe;
    const { describeSandbox, sandboxLine } = sandboxReport;
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
    const tools = executor.createToolExecutor({
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
