import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findBubblewrap } from '../../src/tools/sandbox.ts';
import { errorOf, executorIn, makeSandbox, type Sandbox } from './helpers.ts';

// Issue 15, case 4: after kill -9 of forkcache a running command kept writing to the
// workspace, and `setsid` escaped the timeout. Waits here are for a process state (a pid file
// appears, a pid disappears), polled; no fixed time window is asserted.

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
});
afterEach(() => sandbox.cleanup());

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hasBwrap = findBubblewrap() !== undefined;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '); // a zombie is dead
  } catch {
    return false;
  }
}

async function until(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !test(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!test()) throw new Error(`gave up waiting: ${what}`);
}

describe('bash commands never outlive their call (issue 15, case 4)', () => {
  for (const kind of ['none', 'bwrap'] as const) {
    it.runIf(kind === 'none' || hasBwrap)(
      `a timeout kills what the command started, setsid included (sandbox ${kind})`,
      async () => {
        const marker = path.join(sandbox.workspace, 'ticks');
        const command = `setsid sh -c 'while :; do echo x >> ${marker}; sleep 0.05; done' & sleep 30`;
        const tools = executorIn(sandbox, { allow: ['bash'], sandbox: kind, limits: { bashTimeoutMs: 300 } });
        expect(errorOf(await tools.execute('bash', { command })).content).toMatch(/^command timed out after 300 ms/);
        // the escaped loop is dead: the file stops growing (checked by state, twice in a row)
        await until(() => existsSync(marker), 'the loop ran');
        let last = -1;
        await until(() => {
          const size = readFileSync(marker).length;
          const still = size === last;
          last = size;
          return still && !hostPidsOf('echo x >> ' + marker).length;
        }, 'the loop stopped');
      },
    );
  }

  for (const kind of ['none', 'bwrap'] as const) {
    it.runIf(kind === 'none' || hasBwrap)(
      `kill -9 of forkcache ends the running command (sandbox ${kind})`,
      async () => {
        const marker = path.join(sandbox.workspace, 'ticks');
        // without a sandbox only the process group is reachable after a crash (no setsid here);
        // in bubblewrap the PID namespace dies with its parent, setsid or not
        const loop = `sh -c 'while :; do echo x >> ${marker}; sleep 0.05; done'`;
        const command = kind === 'bwrap' ? `setsid ${loop} & sleep 30` : `${loop} & sleep 30`;
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', path.join(ROOT, 'test/fixtures/bash-then-crash.ts'), sandbox.workspace, kind, command],
          { cwd: ROOT, stdio: 'ignore' },
        );
        await until(() => existsSync(marker), 'the command started');
        expect(hostPidsOf(`echo x >> ${marker}`).length).toBeGreaterThan(0);
        child.kill('SIGKILL');
        await until(() => hostPidsOf(`echo x >> ${marker}`).length === 0, 'the command died with forkcache');
      },
    );
  }
});

/** Live host pids whose command line contains `text`. */
function hostPidsOf(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(text) && alive(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}
