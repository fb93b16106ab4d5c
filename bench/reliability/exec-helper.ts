// What starting git through the helper process (src/core/util/exec-file.ts) saves a large
// process: the thread that starts a program waits while fork() copies the process' page tables,
// so the cost grows with the process' memory. This process first touches --mb MB (an engine with
// its worker threads and the emulator holds 250-400 MB), then runs --calls `git --version` each
// way, one after another, in one run: the time the calling thread was blocked per call, and the
// wall time per call (ratios, not times).
// Run: npx tsx bench/reliability/exec-helper.ts [--mb 300] [--calls 200]
import { execFile } from 'node:child_process';
import { execFileText } from '../../src/core/util/exec-file.ts';

const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const mb = arg('mb', 300);
const calls = arg('calls', 200);

const held = Array.from({ length: Math.ceil(mb / 10) }, () => Buffer.alloc(10 * 1024 * 1024, 1));

async function arm(start: () => Promise<unknown>): Promise<{ blockedMs: number; wallMs: number }> {
  await start(); // a first call (the helper's start) is not counted
  let blocked = 0;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const s = performance.now();
    const done = start();
    blocked += performance.now() - s;
    await done;
  }
  return { blockedMs: blocked / calls, wallMs: (performance.now() - t0) / calls };
}

const direct = await arm(
  () => new Promise((resolve, reject) => execFile('git', ['--version'], (err) => (err ? reject(err) : resolve(0)))),
);
const helper = await arm(() => execFileText('git', ['--version']));
const round = (n: number): number => Math.round(n * 100) / 100;
console.log(
  JSON.stringify({
    rssMb: Math.round(process.memoryUsage().rss / 1e6),
    heldMb: held.length * 10,
    calls,
    direct: { blockedMs: round(direct.blockedMs), wallMs: round(direct.wallMs) },
    helper: { blockedMs: round(helper.blockedMs), wallMs: round(helper.wallMs) },
    blockedRatio: round(direct.blockedMs / helper.blockedMs),
    wallRatio: round(direct.wallMs / helper.wallMs),
  }),
);
