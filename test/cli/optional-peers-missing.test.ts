import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtSources } from '../setup/built-sources.ts';
import { examplePlan } from './run-cli.ts';

/*
 * Every command that needs an optional peer, run as a real process from an install that does
 * not have it: the suite's build of the sources copied into a folder of its own, beside a
 * node_modules holding forkcache's runtime dependencies and only the peers named. Bare imports
 * from that folder cannot reach the project's node_modules, so a missing peer fails as it does
 * for a user; the other tests keep theirs. Each command must exit 1 at once naming the package,
 * before it starts anything. A process still running after the guard is killed: a hang fails
 * the test instead of holding the suite.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const HANG_GUARD_MS = 120_000;
const work = mkdtempSync(join(tmpdir(), 'fc-no-peers-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** An install of forkcache with its dependencies and these optional peers only; returns its folder. */
async function installWith(name: string, peers: readonly string[]): Promise<string> {
  const pkg = join(work, name);
  cpSync(await builtSources(), pkg, { recursive: true });
  // the package's own manifest (its name is how the code finds its root; "type": "module")
  writeFileSync(join(pkg, 'package.json'), readFileSync(join(ROOT, 'package.json')));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const dep of [...Object.keys(manifest.dependencies), ...peers]) {
    const link = join(pkg, 'node_modules', dep);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', dep), link);
  }
  return pkg;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function forkcacheFrom(pkg: string, args: string[], env: Record<string, string> = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(pkg, 'src/cli/main.js'), ...args], {
      cwd: work,
      env: { ...process.env, NO_COLOR: '1', ANTHROPIC_API_KEY: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: HANG_GUARD_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Exited by itself with 1, saying what to install; started nothing that prints. */
function expectMissing(exit: Exit, install: RegExp): void {
  expect(exit.signal, `killed after ${HANG_GUARD_MS} ms: the command hung\n${exit.stderr}`).toBeNull();
  expect(exit.code, exit.stderr).toBe(1);
  expect(exit.stderr).toMatch(/needs .* \(.*optional peer dependenc/);
  expect(exit.stderr).toMatch(install);
}

describe('commands that need a missing optional peer exit 1 at once, naming it', () => {
  let noEcharts: string;
  let noMcpNoRedis: string;
  beforeAll(async () => {
    noEcharts = await installWith('no-echarts', ['@modelcontextprotocol/sdk', 'bullmq', 'ioredis']);
    noMcpNoRedis = await installWith('no-mcp-no-redis', ['echarts']);
  });

  it('proxy --mcp --report without echarts: no socket, no mcp.json, no listening line', async () => {
    const config = join(work, 'mcp.json');
    const exit = await forkcacheFrom(noEcharts, [
      'proxy',
      '--mcp',
      '--mcp-config',
      config,
      '--report',
      join(work, 'proxy.html'),
      '--upstream',
      'http://127.0.0.1:9',
    ]);
    expectMissing(exit, /npm install echarts@\^6/);
    expect(exit.stdout).not.toMatch(/listening/);
    expect(existsSync(config)).toBe(false);
  });

  it('proxy --report, report, run --report and economics --sweep without echarts', async () => {
    const proxy = await forkcacheFrom(noEcharts, ['proxy', '--report', join(work, 'p.html')]);
    expectMissing(proxy, /npm install echarts@/);
    expect(proxy.stdout).not.toMatch(/listening/);

    expectMissing(await forkcacheFrom(noEcharts, ['report', join(work, 'no-such-run')]), /npm install echarts@/);

    const plan = examplePlan();
    const run = await forkcacheFrom(noEcharts, ['run', plan.path, '--report', '--api', 'emulator']);
    expectMissing(run, /npm install echarts@/);
    expect(existsSync(join(plan.dir, 'runs')), 'no run started').toBe(false);
    rmSync(plan.dir, { recursive: true, force: true });

    const sweep = await forkcacheFrom(noEcharts, ['economics', '--sweep', 'forks=1..4', '--prefix', '20000']);
    expectMissing(sweep, /npm install echarts@/);
    expect(sweep.stdout, 'the table is not printed before the failure').toBe('');
    // without the chart, the sweep needs no echarts
    const table = await forkcacheFrom(noEcharts, [
      'economics',
      '--sweep',
      'forks=1..4',
      '--prefix',
      '20000',
      '--no-chart',
    ]);
    expect(table.code, table.stderr).toBe(0);
  });

  it('proxy --mcp and mcp without the MCP SDK', async () => {
    const proxy = await forkcacheFrom(noMcpNoRedis, ['proxy', '--mcp', '--upstream', 'http://127.0.0.1:9']);
    expectMissing(proxy, /npm install @modelcontextprotocol\/sdk@/);
    expect(proxy.stdout).not.toMatch(/listening/);
    const config = join(work, 'bridge.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { forkcache: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } } },
      }),
    );
    expectMissing(await forkcacheFrom(noMcpNoRedis, ['mcp', '--config', config]), /npm install @modelcontextprotocol/);
  });

  it('worker, run --redis and resume --redis without bullmq and ioredis', async () => {
    const env = { FORKCACHE_JOB_SECRET: 'x'.repeat(64) };
    const redis = 'redis://127.0.0.1:9';
    expectMissing(
      await forkcacheFrom(noMcpNoRedis, ['worker', '--redis', redis], env),
      /npm install 'bullmq@[^']*' ioredis@/,
    );
    const plan = examplePlan();
    const run = await forkcacheFrom(noMcpNoRedis, ['run', plan.path, '--redis', redis, '--api', 'real'], env);
    expectMissing(run, /npm install 'bullmq@[^']*' ioredis@/);
    expect(existsSync(join(plan.dir, 'runs')), 'no run started').toBe(false);
    const resume = await forkcacheFrom(noMcpNoRedis, ['resume', join(plan.dir, 'runs', 'none'), '--redis', redis], env);
    expectMissing(resume, /npm install 'bullmq@[^']*' ioredis@/);
    rmSync(plan.dir, { recursive: true, force: true });
  });

  it('forkcache/ai-sdk loads without the AI SDK: the app brings it, forkcache imports none of it', async () => {
    const entry = pathToFileURL(join(noMcpNoRedis, 'src/ai-sdk.js')).href;
    const script = `const m = await import(${JSON.stringify(entry)}); process.stdout.write(Object.keys(m).sort().join(','));`;
    const exit = await new Promise<Exit>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: work,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: HANG_GUARD_MS,
        killSignal: 'SIGKILL',
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toMatch(/createForkcache/);
  });
});
