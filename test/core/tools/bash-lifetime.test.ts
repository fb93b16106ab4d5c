import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launcherArgs, NOT_STARTED_EXIT } from '../../../src/core/tools/sandbox/launcher.ts';
import { plainEscapeRisk } from '../../../src/core/tools/sandbox/sandbox.ts';
import { findBubblewrap } from '../../../src/core/tools/sandbox/bwrap-probe.ts';
import { describeSandbox, sandboxLine } from '../../../src/core/tools/sandbox/report.ts';
import { NOBODY, stageForOtherUser, type Staged } from '../../as-user.ts';
import { executorIn, makeSandbox, type Sandbox } from './helpers.ts';

// Issue 15, case 4: after kill -9 of forkcache a running command kept writing to the
// workspace, and `setsid` escaped the timeout. Issue 25: the kill -9 case failed under load: the
// survivor (state S, ppid 1, its own group) had no watchdog at all; forkcache had been killed
// between spawning the command and spawning the watchdog. Now the command waits for a go line
// that is written only once the watchdog runs (launcher.ts), and the watchdog learns of the
// death from a pipe, not by polling a pid. Waits here are for a process state (a file appears,
// pids disappear), polled with no window of their own: the bound is a safety net that prints
// every survivor's pid, state, ppid and pgid.

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await makeSandbox();
});
afterEach(() => sandbox.cleanup());

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const hasBwrap = findBubblewrap() !== undefined;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '); // a zombie is dead
  } catch {
    return false;
  }
}

const GIVE_UP_MS = 100_000; // far beyond any load seen; the test's timeout is above it

async function until(test: () => boolean, what: string, survivors = ''): Promise<void> {
  const start = Date.now();
  while (!test() && Date.now() - start < GIVE_UP_MS) await new Promise((r) => setTimeout(r, 10));
  if (!test()) throw new Error(`gave up waiting: ${what}${survivors && `\n${survivorsOf(survivors)}`}`);
}

/** pid, state, ppid and pgid of every process whose command line holds `text`, and of watchdogs. */
function survivorsOf(text: string): string {
  const out: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!cmd.includes(text) && !cmd.includes('forkcache-watchdog')) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push(`pid ${entry} state ${state} ppid ${ppid} pgid ${pgid}: ${cmd}`);
    } catch {
      // gone
    }
  }
  return out.join('\n') || '(no survivor found)';
}

describe('bash commands never outlive their call (issue 15, case 4)', () => {
  for (const kind of ['none', 'bwrap'] as const) {
    it.runIf(kind === 'none' || hasBwrap)(
      `the end of the call kills what the command started, setsid included (sandbox ${kind})`,
      async () => {
        const marker = path.join(sandbox.workspace, 'ticks');
        const command = `setsid sh -c 'while :; do echo x >> ${marker}; sleep 0.05; done' & sleep 30`;
        const tools = executorIn(sandbox, { allow: ['bash'], sandbox: kind });
        // the call ends (an abort: the timeout ends it the same way, killTree) once the loop runs
        const controller = new AbortController();
        const call = tools.execute('bash', { command }, { signal: controller.signal });
        await until(() => existsSync(marker), 'the loop ran');
        controller.abort(new Error('stop'));
        await expect(call).rejects.toThrow('stop');
        // the escaped loop is dead: the file stops growing (checked by state, twice in a row)
        let last = -1;
        await until(
          () => {
            const size = readFileSync(marker).length;
            const still = size === last;
            last = size;
            return still && !hostPidsOf('echo x >> ' + marker).length;
          },
          'the loop stopped',
          `echo x >> ${marker}`,
        );
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
        await until(
          () => hostPidsOf(`echo x >> ${marker}`).length === 0,
          `the command died with forkcache (pid ${child.pid})`,
          `echo x >> ${marker}`,
        );
      },
    );
  }
});

// bubblewrap arms `--die-with-parent` without looking whether its parent is still there: a
// forkcache killed while bubblewrap set the sandbox up (its go line already written) left the
// sandbox and its command running for good (a distributed host killed under load, 1 run in 2).
// The launcher now says it is up first, and gets its go only then. The fixture kills forkcache
// on the next tick after bubblewrap is spawned: before any I/O callback could read that byte.
describe.runIf(hasBwrap)('kill -9 of forkcache while bubblewrap sets the sandbox up', () => {
  it('the command never runs, and nothing of the sandbox stays', async () => {
    const token = `never-${process.pid}-${Date.now()}`;
    const ran = path.join(sandbox.workspace, 'ran');
    mkfifoIn(sandbox.workspace);
    const command = `echo ${token} > ${ran}; read line < hold.fifo`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'test/fixtures/bash-start-then-crash.ts'), sandbox.workspace, command],
      { cwd: ROOT, stdio: 'ignore' },
    );
    try {
      const [, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
      expect(signal).toBe('SIGKILL');
      // the sandbox (bubblewrap, the launcher) ends by itself: its go never came
      await until(() => hostPidsOf(token).length === 0, 'the sandbox ended', token);
      expect(existsSync(ran)).toBe(false);
    } finally {
      // a sandbox that stayed (the bug) is not left behind the test
      for (const pid of hostPidsOf(token)) process.kill(pid, 'SIGKILL');
    }
  });
});

// Round 4: `(setsid sleep N &)` leaves the command's process group (setsid) and its process tree
// (the subshell exits, the sleeper is re-parented to init): neither the group kill nor the tree
// walk finds it. Without bubblewrap the command's pids cgroup does (as root; elsewhere the run
// says at start that such processes may outlive the call).
const cgroupHere = plainEscapeRisk() === undefined;

describe('sandbox none: no process outlives its call or forkcache', () => {
  // The sleeper is found by its command line, on the host: where no pids cgroup can be made (not
  // root) the command runs in a PID namespace, and the pid it writes is the namespace's own.
  const sleep = `sleep 1000.${process.pid}1`;
  const escape = (pidFile: string): string =>
    `(setsid sh -c 'echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; exec ${sleep}' > /dev/null 2>&1 < /dev/null &)`;

  it.runIf(cgroupHere)('a setsid in a subshell is killed when the call ends', async () => {
    const pidFile = path.join(sandbox.workspace, 'pid');
    const tools = executorIn(sandbox, { allow: ['bash'], sandbox: 'none' });
    const result = await tools.execute('bash', { command: `${escape(pidFile)}; until [ -e ${pidFile} ]; do :; done` });
    expect(result.isError).toBe(false);
    // the escaped sleeper left the tree: its parent is no longer the command
    await until(() => hostPidsOf(sleep).length === 0, 'the escaped sleeper died with its call', sleep);
  });

  it.runIf(cgroupHere)('kill -9 of forkcache: the watchdog kills it too', async () => {
    const pidFile = path.join(sandbox.workspace, 'pid');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'test/fixtures/bash-then-crash.ts'),
        sandbox.workspace,
        'none',
        `${escape(pidFile)}; sleep 30`,
      ],
      { cwd: ROOT, stdio: 'ignore' },
    );
    await until(() => existsSync(pidFile), 'the command started');
    const sleepers = hostPidsOf(sleep);
    expect(sleepers.length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await until(
      () => sleepers.every((pid) => !alive(pid)),
      `the escaped sleeper died with forkcache (pid ${child.pid})`,
      sleep,
    );
  });

  it('says at start, where no cgroup can be made, that such processes may outlive the call', () => {
    const line = sandboxLine(describeSandbox('none'));
    if (cgroupHere) expect(line).not.toMatch(/may outlive/);
    else expect(line).toMatch(/NOT applied here: killing what a command leaves running after `setsid`.*may outlive/);
  });
});

// The same attack with no pids cgroup to fall back on: forkcache run by an unprivileged user
// (here `nobody`, through setpriv), where no cgroup can be made. The command then runs in a PID
// namespace of its own (pid-namespace.ts, in a user namespace), which `setsid` cannot leave and
// the kernel kills whole when its first process ends. Before, the sleeper outlived the call.
// The fixture runs from a bundle staged where `nobody` can read it (test/as-user.ts), never from
// the checkout, which `nobody` may not reach (a clone under a private folder: issue 47).
describe('sandbox none, not root (no pids cgroup): no process outlives its call or forkcache', () => {
  // a sleep no other process runs: the sleeper is found by its command line (its pid inside differs)
  const sleep = `sleep 1000.${process.pid}`;
  const escape = (pidFile: string): string =>
    `(setsid sh -c 'echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; exec ${sleep}' > /dev/null 2>&1 < /dev/null &)`;

  let staged: Staged | { reason: string };
  beforeAll(async () => {
    staged = await stageForOtherUser(path.join(ROOT, 'test/fixtures/bash-then-crash.ts'));
  });
  afterAll(() => {
    if ('run' in staged) staged.cleanup();
  });

  /** forkcache's bash tool in a process of its own, as `nobody`. */
  function runAsNobody(as: Staged, command: string) {
    chownSync(sandbox.base, NOBODY, NOBODY);
    chownSync(sandbox.workspace, NOBODY, NOBODY);
    const child = as.run([sandbox.workspace, 'none', command], { env: { ...process.env, HOME: sandbox.workspace } });
    child.stdin.end();
    return child;
  }

  it('a setsid in a subshell is killed when the call ends', async (ctx) => {
    if ('reason' in staged) return ctx.skip(staged.reason);
    const pidFile = path.join(sandbox.workspace, 'pid');
    const marker = path.join(sandbox.workspace, 'done');
    const child = runAsNobody(
      staged,
      `${escape(pidFile)}; until [ -e ${pidFile} ]; do :; done; ps -o pid= -e > ${marker}`,
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    // inside, the command saw only its own namespace: its bash, the sleeper, ps
    expect(readFileSync(marker, 'utf8').trim().split(/\s+/).length).toBeLessThanOrEqual(4);
    await until(() => hostPidsOf(sleep).length === 0, 'the escaped sleeper died with its call', sleep);
  });

  it('kill -9 of forkcache: the watchdog kills it too', async (ctx) => {
    if ('reason' in staged) return ctx.skip(staged.reason);
    const pidFile = path.join(sandbox.workspace, 'pid');
    const child = runAsNobody(staged, `${escape(pidFile)}; sleep 30`);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let exited = false;
    child.on('close', () => (exited = true));
    await until(() => existsSync(pidFile) || exited, 'the command started');
    expect(existsSync(pidFile), `forkcache ended before the command started: ${stderr}`).toBe(true);
    const sleepers = hostPidsOf(sleep);
    expect(sleepers.length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await until(() => sleepers.every((pid) => !alive(pid)), 'the escaped sleeper died with forkcache', sleep);
  });
});

describe('the launcher: nothing runs before forkcache says go (issue 25)', () => {
  it('runs the command after the go line, and never when stdin closes first (forkcache died)', async () => {
    const marker = path.join(sandbox.workspace, 'ran');
    const run = (go: string) =>
      new Promise<number | null>((resolve) => {
        const child = spawn('bash', launcherArgs(`echo yes > ${marker}`), { stdio: ['pipe', 'ignore', 'ignore'] });
        child.on('close', resolve);
        child.stdin.end(go);
      });
    expect(await run('')).toBe(NOT_STARTED_EXIT);
    expect(existsSync(marker)).toBe(false);
    expect(await run('\n')).toBe(0);
    expect(readFileSync(marker, 'utf8')).toBe('yes\n');
  });
});

/** A FIFO `hold.fifo` in `dir` that nothing writes: a command reading it waits until killed. */
function mkfifoIn(dir: string): void {
  execFileSync('mkfifo', [path.join(dir, 'hold.fifo')]);
}

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
