import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sharedHostService } from './host-service.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/core/tools/sandbox/bwrap-probe.ts';
import { createToolExecutor, type ToolExecutorOptions } from '../../src/core/tools/executor.ts';
import { describeSandbox } from '../../src/core/tools/sandbox/report.ts';
import { makeSandbox, type Sandbox } from '../core/tools/helpers.ts';

// Issue 24, routes 3 and 4, played as the attacker: a fork's command in the bubblewrap sandbox,
// run as root as in CI. Before: CapEff 000001fffeffffff and `mount -o remount,rw /` worked;
// the host's 127.0.0.1 (the emulator, its stats) was reachable and /proc/net/tcp listed its
// ports; /etc/shadow, /root and the run directory were readable; 300 background processes and
// a 485 MB file in /tmp were allowed. These tests need bubblewrap; where it is missing they are
// skipped, and the title says why.

const found = probeBubblewrap();
const reason = 'missing' in found ? found.missing : '';
const title = `a command in the bubblewrap sandbox${reason ? ` (skipped: ${reason})` : ''}`;

let sandbox: Sandbox;
let runDir: string;
let stateDir: string; // forkcache's state directory, as it is when the workspace is $HOME
beforeEach(async () => {
  sandbox = await makeSandbox();
  runDir = path.join(sandbox.workspace, '.forkcache', 'runs');
  stateDir = path.join(sandbox.workspace, '.local', 'state', 'forkcache');
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(path.join(stateDir, 'run-key'), 'the key that signs run directories\n');
  mkdirSync(path.join(runDir, 'fo001-x'), { recursive: true });
  writeFileSync(path.join(runDir, 'fo001-x', 'manifest.json'), '{"fanoutId":"fo001-x"}\n');
  mkdirSync(path.join(sandbox.workspace, '.git'));
  writeFileSync(path.join(sandbox.workspace, '.git', 'config'), '[core]\n');
});
afterEach(() => sandbox.cleanup());

const service = sharedHostService();

/** Wait for a state (polled), with a safety bound far beyond any load. */
async function until(test: () => boolean): Promise<void> {
  const start = Date.now();
  while (!test() && Date.now() - start < 60_000) await new Promise((r) => setTimeout(r, 10));
  expect(test()).toBe(true);
}

/** Run `command` as a fork's bash in the sandbox; the output whether it succeeded or not. */
async function inSandbox(command: string, options: Partial<ToolExecutorOptions> = {}): Promise<string> {
  const tools = createToolExecutor({
    workspace: sandbox.workspace,
    allow: ['bash'],
    sandbox: 'bwrap',
    protect: [runDir, stateDir],
    ...options,
  });
  expect(tools.sandbox).toBe('bwrap');
  return (await tools.execute('bash', { command })).content;
}

describe.skipIf(reason !== '')(title, () => {
  it('has no capability: remounting / and unmounting /tmp fail', async () => {
    const out = await inSandbox(
      'grep CapEff /proc/self/status; mount -o remount,rw / && echo REMOUNTED; umount -l /tmp && echo UNMOUNTED; touch /x && echo ROOT-WRITTEN; echo done',
    );
    expect(out).toMatch(/CapEff:\s+0000000000000000/);
    expect(out).not.toMatch(/REMOUNTED|UNMOUNTED|ROOT-WRITTEN/);
    expect(out).toContain('done');
  });

  it("reaches no host port: curl and /dev/tcp to the test's 127.0.0.1 listener fail, /proc/net/tcp lists none", async () => {
    const hexPort = service.port.toString(16).toUpperCase().padStart(4, '0');
    const out = await inSandbox(
      `curl -s -m 5 http://127.0.0.1:${service.port}/ && echo CURL-OK; (exec 3<>/dev/tcp/127.0.0.1/${service.port} && cat <&3) && echo TCP-OK; cat /proc/net/tcp /proc/net/tcp6 2>/dev/null; echo done`,
    );
    expect(out).not.toMatch(/host service|CURL-OK|TCP-OK/);
    expect(out).not.toContain(`:${hexPort}`);
    expect(out).toContain('done');
    // a plan's `network: true` opts in: the same listener answers
    expect(await inSandbox(`curl -s -m 20 http://127.0.0.1:${service.port}/`, { network: true })).toContain(
      'host service',
    );
  });

  it('sees no /root, /home, /etc/shadow, run directory, state directory (key), host process or other host path', async () => {
    const out = await inSandbox(
      [
        'ls -A /',
        'for p in /root /home /etc/shadow /etc/sudoers /var /opt /srv /etc/ssl/private; do [ -e "$p" ] && echo "VISIBLE $p"; done',
        `ls -A ${runDir}; cat ${runDir}/fo001-x/manifest.json && echo RUN-DIR-READ`,
        `cat ${stateDir}/run-key && echo KEY-READ; ls -A .local/state/forkcache`,
        `kill -0 ${process.pid} && echo HOST-PROCESS-SIGNALLED; ls /proc | grep -c '^[0-9]'`,
        `mv .forkcache .moved && echo MOVED; ls .moved 2>/dev/null`,
        `ls ${sandbox.outside} && echo OUTSIDE-LISTED`,
        'cat /etc/passwd | cut -d: -f1 | tr "\\n" " "',
        'echo done',
      ].join('; '),
    );
    expect(out).not.toMatch(/VISIBLE|RUN-DIR-READ|KEY-READ|signs run|HOST-PROCESS|MOVED|OUTSIDE-LISTED|"fanoutId"/);
    expect(out).toContain('done');
    expect(out).not.toMatch(/\bdaemon\b|\bwww-data\b/); // only root, nobody and the caller are listed
    expect(existsSync(path.join(runDir, 'fo001-x', 'manifest.json'))).toBe(true);
  });

  it("reads none of the host kernel's files in /proc: symbols, keys, timers, boot line, disks", async () => {
    const files = ['kallsyms', 'modules', 'keys', 'timer_list', 'sched_debug', 'cmdline', 'iomem', 'partitions'];
    const here = files.filter((f) => existsSync(`/proc/${f}`));
    expect(here).toContain('cmdline');
    const out = await inSandbox(
      [
        `for f in ${here.join(' ')}; do n=$(head -c 64 /proc/$f 2>/dev/null | wc -c); [ "$n" -gt 0 ] && echo "LEAK $f"; done`,
        'ls -A /proc/acpi /proc/irq 2>/dev/null | grep -v : | grep -c . || true',
        'echo x > /proc/irq/forged 2>/dev/null && echo WROTE',
        // what stays, for the programs that read it
        'head -c 9 /proc/meminfo; echo; grep -c . /proc/uptime',
      ].join('; '),
    );
    expect(out).not.toMatch(/LEAK|WROTE/);
    expect(out).toMatch(/^0$/m);
    expect(out).toContain('MemTotal:');
  });

  it("cannot change the workspace's .git (no hook or fsmonitor for the host's git to run)", async () => {
    const out = await inSandbox(
      'echo "[core] fsmonitor = touch /tmp/pwn" >> .git/config && echo WRITTEN; mkdir -p .git/hooks && echo HOOKS; rm -rf .git && echo REMOVED; mv .git g && echo MOVED; echo done',
    );
    expect(out).not.toMatch(/WRITTEN|HOOKS|REMOVED|MOVED/);
    expect(out).toContain('done');
  });

  it('caps a fork bomb at the process limit', async () => {
    // dash gives up at the first failed fork (bash would retry for seconds); builtins only after it
    const out = await inSandbox(
      [
        'grep pids /proc/self/cgroup',
        "sh -c 'n=0; while [ $n -lt 300 ]; do sleep 60 & n=$((n+1)); echo $n > /tmp/count; done' 2>/dev/null",
        'read n < /tmp/count; echo "forked $n"; kill -9 -1',
      ].join('; '),
      { limits: { bashMaxProcesses: 64 } },
    );
    const forked = Number(/forked (\d+)/.exec(out)?.[1]);
    expect(forked).toBeGreaterThan(10);
    expect(forked).toBeLessThan(64);
    // its pids cgroup (root: RLIMIT_NPROC does not bind uid 0) is removed once the command ended
    const cgroup = /pids:(\/forkcache-[\w-]+)/.exec(out)?.[1];
    if (cgroup !== undefined) await until(() => !existsSync(path.join('/sys/fs/cgroup/pids', cgroup)));
  });

  it('caps a large file in /tmp (its size) and in the workspace (the file size limit)', async () => {
    const out = await inSandbox(
      'dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1 | grep -o "No space left on device"; ls -l /tmp/fill | cut -d" " -f5',
      { limits: { bashTmpMb: 16 } },
    );
    expect(out).toMatch(/No space left on device/);
    expect(Number(out.trim().split('\n').at(-1))).toBeLessThanOrEqual(16 * 1024 * 1024);
    await inSandbox('dd if=/dev/zero of=big bs=1M count=64 2>/dev/null; true', { limits: { bashMaxFileMb: 4 } });
    expect(statSync(path.join(sandbox.workspace, 'big')).size).toBe(4 * 1024 * 1024);
  });

  it('caps the memory of one process', async () => {
    const alloc = (mb: number, tag: string) =>
      `node -e 'const a = []; for (let i = 0; i < ${mb / 16}; i++) a.push(Buffer.alloc(16 << 20, 1)); console.log("${tag}")' 2>&1 | tail -1`;
    const out = await inSandbox(`${alloc(64, 'SMALL-OK')}; ${alloc(1024, 'ALLOCATED')}; echo done`, {
      limits: { bashMaxMemoryMb: 256 },
    });
    expect(out).toContain('SMALL-OK');
    expect(out).not.toContain('ALLOCATED');
    expect(out).toContain('done');
  });

  it('says what holds and what does not, each protection once', () => {
    const report = describeSandbox('auto', { network: false });
    expect(report.kind).toBe('bwrap');
    expect(report.applied).toEqual(expect.arrayContaining(['no capabilities']));
    const all = [...report.applied, ...report.missing].join('\n');
    for (const part of [/user namespace/, /network/, /\/tmp/, /process/, /memory per process/, /per file/])
      expect(all).toMatch(part);
    // where the kernel and bubblewrap allow all of it (this machine kind: root, bwrap 0.8, cgroup v1 pids)
    if (process.getuid?.() === 0 && existsSync('/sys/fs/cgroup/pids/cgroup.procs')) expect(report.missing).toEqual([]);
  });
});
