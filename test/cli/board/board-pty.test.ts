import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkcache, lastJson } from '../run-cli.ts';
import { forkcacheInPty } from './pty.ts';
import { renamePlan } from './plan-500.ts';

// Issue 27: at 80 forks in a 50-row terminal the old board left its totals line in the
// scrollback 21 times and finished rows twice. Here 500 forks run in a real pseudo-terminal of
// 40 rows; a terminal emulator (xterm.js) interprets what was written, as a person would see it.

// eslint-disable-next-line no-control-regex -- colour and cursor codes are what is stripped
const plainText = (raw: string): string => raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

const FORKS = 500;
const FORK_LINE = /^(fo\d+-[0-9a-f]+-f\d+) {2}(\S+)/;

function forkLines(lines: string[]): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  for (const line of lines) {
    const m = FORK_LINE.exec(line);
    if (m) seen.set(m[1]!, [...(seen.get(m[1]!) ?? []), m[2]!]);
  }
  return seen;
}

describe('the live board at 500 forks in a 40-row pseudo-terminal', () => {
  it('ends with each fork once and the totals once, the live area gone', async () => {
    const { plan } = renamePlan(FORKS);
    const run = forkcacheInPty(['run', plan, '--api', 'emulator'], { rows: 40, cols: 160 });
    const { code, lines, raw } = await run.exited;
    expect(code, raw.slice(-3000)).toBe(0);
    const forks = forkLines(lines);
    expect(forks.size).toBe(FORKS);
    expect([...forks.values()].every((statuses) => statuses.length === 1 && statuses[0] === 'completed')).toBe(true);
    expect(lines.filter((l) => /^tree total {2,}/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('tree total: '))).toEqual([
      `tree total: ${FORKS} forks, pass 1, parent not included`,
    ]);
    // the board's own lines were redrawn in place and erased at the end
    expect(lines.filter((l) => / forks ended \(/.test(l))).toEqual([]);
    expect(lines.filter((l) => /^\+\d+ queued/.test(l))).toEqual([]);
    // ...but it was there while the run went on, with the whole plan counted from its first frame
    const denominators = new Set([...raw.matchAll(/\d+\/(\d+) forks ended/g)].map((m) => Number(m[1])));
    expect([...denominators]).toEqual([FORKS]);
    // the file beside each fork
    expect(lines.find((l) => l.startsWith(`${[...forks.keys()][0]!}  `))).toMatch(/ src\/f\d{3}\.ts$/);
  });

  it('Ctrl-C halfway: the forks end cancelled without the grace timer, a short summary, the resume command last; resume finishes the run', async () => {
    const { plan } = renamePlan(FORKS);
    const run = forkcacheInPty(['run', plan, '--api', 'emulator'], { rows: 40, cols: 160 });
    await run.until((raw) => (plainText(raw).match(/ completed {2}\d+ turns/g) ?? []).length >= FORKS / 2);
    run.type('\x03'); // the terminal's Ctrl-C: the tty sends SIGINT to the foreground process group
    const { code, lines, raw } = await run.exited;
    expect(code, raw.slice(-3000)).toBe(130);
    // the line is printed above the live board, so it is on the screen
    expect(lines).toContain('interrupted: cancelling the running forks (Ctrl-C again to stop them now)');
    // every fork stopped at its signal: the grace timer did not have to end threads
    expect(raw).not.toContain('interrupted: stopping the forks that are still running');
    // each fork that ended before or around the stop once; the cancelled ones are counted, not listed
    const forks = forkLines(lines);
    expect([...forks.values()].every((s) => s.length === 1 && s[0] !== 'cancelled')).toBe(true);
    // the forks listed are those that ended some other way (a fork can end failed or not_done at
    // the very moment of the stop): every other one was cancelled
    const cancelled = FORKS - forks.size;
    const unfinished = [...forks.values()].filter((s) => !['completed', 'failed', 'capped'].includes(s[0]!)).length;
    expect(cancelled).toBeGreaterThan(0);
    // short at any size: what follows the Ctrl-C fits a screen, and the resume command is last
    const after = lines.slice(
      lines.indexOf('interrupted: cancelling the running forks (Ctrl-C again to stop them now)'),
    );
    const printed = after.filter((l) => l.trim() !== '');
    expect(printed.length, printed.join('\n')).toBeLessThanOrEqual(40);
    expect(printed.at(-1)).toMatch(/— resume with: forkcache resume \//);
    expect(printed.filter((l) => /^cancelled {2}\d+ fork\(s\) \(f\d+, /.test(l))).toHaveLength(1);
    expect(printed.filter((l) => l.startsWith('each fork: forkcache status /'))).toHaveLength(1);
    expect(lines.filter((l) => /^tree total {2,}/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('tree total: '))).toEqual([
      `tree total: ${FORKS} forks, pass 1, parent not included`,
    ]);
    const hint = lines.find((l) => l.includes('— resume with: forkcache resume '));
    expect(hint).toMatch(new RegExp(`^${cancelled} cancelled — resume with: forkcache resume /`));
    const runDir = hint!.slice(hint!.indexOf('forkcache resume ') + 'forkcache resume '.length);
    expect(isAbsolute(runDir) && existsSync(runDir)).toBe(true);

    const resumed = await forkcache(['resume', runDir, '--json']);
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
    const summary = lastJson(resumed.stdout);
    // resume continues the cancelled and failed forks; one that ended not_done waits for --retry
    expect(summary.forks).toMatchObject({ total: FORKS, completed: FORKS - unfinished, cancelled: 0 });
    // one run across the resume: the ledger sums both passes, and says so
    // the resume wrote the shared prefix first (one warm-up request): billed, not the parent's
    expect(summary['tree_total_covers']).toBe(
      `${FORKS} forks, passes 1–2, parent not included, 1 warm-up request(s) included`,
    );
  });
});
