import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson } from '../run-cli.ts';
import { forkcacheInPty } from './pty.ts';

// eslint-disable-next-line no-control-regex -- colour and cursor codes are what is stripped
const plainText = (raw: string): string => raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

describe('the demo at its end', () => {
  it('removes its temporary workspace after a clean run, naming it; --keep-workspace keeps it', async () => {
    const clean = await forkcache(['demo', '--forks', '2', '--latency', 'off']);
    expect(clean.code).toBe(0);
    const removed = /^workspace (\/\S+) removed \(--keep-workspace keeps it\)$/m.exec(clean.stdout);
    expect(removed, clean.stdout).not.toBeNull();
    expect(existsSync(removed![1]!)).toBe(false);
    const kept = await forkcache(['demo', '--forks', '2', '--latency', 'off', '--json', '--keep-workspace']);
    const summary = lastJson(kept.stdout);
    expect(summary.workspace_kept).toBe(true);
    expect(existsSync(summary.workspace)).toBe(true);
  });

  it('Ctrl-C while the forks run: the parent sends no further turn, counts the cancelled, and the workspace is kept', async () => {
    const run = forkcacheInPty(['demo', '--forks', '40', '--latency', 'off'], { rows: 40, cols: 160 });
    await run.until((raw) => (plainText(raw).match(/ completed {2}\d+ turns/g) ?? []).length >= 10);
    run.type('\x03');
    const { code, lines, raw } = await run.exited;
    expect(code, raw.slice(-3000)).toBe(130);
    // before: the parent wrote one more answer (14 s at realistic latency) and said "All 64 fork(s) reported back"
    const parent = lines.find((l) => l.startsWith('parent: '));
    expect(parent).toMatch(/^parent: interrupted at turn \d+ \(Ctrl-C\); of its 40 fork\(s\): .*\d+ cancelled/);
    expect(raw).not.toContain('interrupted: stopping the forks that are still running');
    const kept = lines.find((l) => l.startsWith('workspace kept at /'));
    const workspace = /^workspace kept at (\S+) /.exec(kept ?? '')?.[1];
    expect(workspace && existsSync(workspace)).toBe(true);
    expect(
      lines.some((l) => /^\d+ cancelled — resume with: forkcache resume \/\S+\/\.forkcache\/runs\/fo001-/.test(l)),
    ).toBe(true);
  });
});
