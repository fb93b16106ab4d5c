// Starts and stops the real llama-server that scripts/llama/setup.sh installed, for the
// integration tests and the engine benchmark: on 127.0.0.1, on a free port, in the Debian root
// (with /proc mounted while a server runs there). Also a command: `npx tsx
// scripts/llama/llama-server.ts [tiny|qwen3-0.6b] [server flags…]` prints the base URL and
// serves until Ctrl-C.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

export type LlamaModel = 'tiny' | 'qwen3-0.6b';

/** Where setup.sh put things (FORKCACHE_LLAMA_CACHE, else the XDG cache folder). */
export function llamaCacheDir(): string {
  const base = process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  return process.env['FORKCACHE_LLAMA_CACHE'] || join(base, 'forkcache', 'llama');
}

/** Whether the engine and a model are installed; if not, why (what a skipped test prints). */
export function llamaAvailability(model: LlamaModel = 'tiny'): { ok: true } | { ok: false; why: string } {
  const cache = llamaCacheDir();
  const root = join(cache, 'root');
  const failed = join(cache, 'setup-failed.txt');
  if (existsSync(failed)) return { ok: false, why: readFileSync(failed, 'utf8').trim() };
  if (process.getuid?.() !== 0) return { ok: false, why: 'llama-server runs in a chroot: needs root' };
  if (!existsSync(join(root, 'usr', 'bin', 'llama-server')))
    return { ok: false, why: `no llama-server under ${root}: run bash scripts/llama/setup.sh` };
  if (!existsSync(modelFile(root, model)))
    return {
      ok: false,
      why: `no ${model} model under ${root}: run bash scripts/llama/setup.sh${model === 'tiny' ? '' : ' --bench'}`,
    };
  return { ok: true };
}

function modelFile(root: string, model: LlamaModel): string {
  return join(root, 'opt', 'forkcache', 'models', `${model}.gguf`);
}

export interface LlamaServerOptions {
  model?: LlamaModel;
  /** `-np`: slots. Undefined: the server's default (auto: 4 slots sharing one unified KV cache). */
  parallel?: number | undefined;
  /** Give the server a `--slot-save-path` (a folder of its own, removed on stop). Default true. */
  slotSave?: boolean;
  /** `-t` (default 2). */
  threads?: number;
  /** More flags, as llama-server takes them. */
  args?: readonly string[];
}

export interface LlamaServer {
  /** `http://127.0.0.1:PORT` (the engine's own endpoints: /health, /props, /slots, /metrics). */
  readonly url: string;
  /** `url` + `/v1`: what `OPENAI_BASE_URL` is set to. */
  readonly baseURL: string;
  readonly pid: number;
  /** Its `--slot-save-path` as this machine sees it (undefined without one): what forkcache's `slotSavePath` is. */
  readonly slotDir: string | undefined;
  /** The server's log so far (stdout and stderr). */
  log(): string;
  /** CPU seconds the server process has used (user + system, from /proc). */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Processes whose root is `root` (other than `except`): /proc stays mounted while any runs. */
function othersInRoot(root: string, except: number): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === except) continue;
    try {
      if (readlinkSync(`/proc/${entry}/root`) === root) count += 1;
    } catch {
      // gone, or not ours to read
    }
  }
  return count;
}

function procMounted(root: string): boolean {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[1] === join(root, 'proc'));
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

async function waitHealthy(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`llama-server exited before it was ready:\n${log().slice(-2000)}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    // the model loads in a few seconds; the process exit above ends the wait early
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Start llama-server in the root and wait until `/health` answers. */
export async function startLlamaServer(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  const model = options.model ?? 'tiny';
  const available = llamaAvailability(model);
  if (!available.ok) throw new Error(available.why);
  const root = join(llamaCacheDir(), 'root');
  if (!procMounted(root)) execFileSync('mount', ['-t', 'proc', 'proc', join(root, 'proc')]);
  const port = await freePort();
  const slots = `/opt/forkcache/slots/${port}`;
  const args = [
    ...['-m', `/opt/forkcache/models/${model}.gguf`, '--host', '127.0.0.1', '--port', String(port)],
    ...['-t', String(options.threads ?? 2), '--metrics'],
    ...(options.parallel === undefined ? [] : ['-np', String(options.parallel)]),
    ...(options.slotSave === false ? [] : ['--slot-save-path', slots]),
    ...(options.args ?? []),
  ];
  if (options.slotSave !== false) mkdirSync(join(root, slots), { recursive: true });
  const child = spawn('chroot', [root, 'llama-server', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const append = (chunk: Buffer): void => {
    text += chunk.toString('utf8');
    if (text.length > 8_000_000) text = text.slice(-4_000_000);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid ?? -1;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(join(root, slots), { recursive: true, force: true });
    if (othersInRoot(root, pid) === 0 && procMounted(root)) {
      try {
        execFileSync('umount', [join(root, 'proc')]);
      } catch {
        // another server started meanwhile: it keeps the mount
      }
    }
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(url, child, () => text);
  } catch (err) {
    await stop();
    throw err;
  }
  const slotDir = options.slotSave === false ? undefined : join(root, slots);
  return { url, baseURL: `${url}/v1`, pid, slotDir, log: () => text, cpuSeconds: () => cpuOf(pid), stop };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [model = 'tiny', ...args] = process.argv.slice(2);
  const server = await startLlamaServer({ model: model as LlamaModel, args });
  process.stdout.write(`llama-server (${model}) at ${server.url}\nOPENAI_BASE_URL=${server.baseURL}\n`);
  const stop = (): void => void server.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
