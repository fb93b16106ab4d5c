import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion, type Plugin } from 'esbuild';

/*
 * The sources compiled to JavaScript once per test run, for the processes and worker threads
 * the tests start: the command (`node BUILT/cli-bundle/src/cli/main.js`) and the fork worker
 * (`BUILT/workers/fork-worker.js`) load in a fraction of what `--import tsx` costs in every process and every thread (the loader,
 * its hooks thread and a transform of the whole module graph each time).
 *
 * The folder is named by a hash of everything that goes into it (every file under src/ and
 * workers/, package.json and its lock, tsconfig.json, this file, esbuild's version), so a build of other sources is never
 * used: an edit makes a new hash and a new build. It lives under node_modules/.cache of the
 * package, so the package's own dependencies resolve from it and `packageRoot()` still finds
 * the package's package.json above it. One file out per file in (imports kept, `.ts` specifiers
 * rewritten to `.js`), as `tsc` lays out dist/; JSON modules are inlined into their one importer.
 *
 * Two bundles sit beside that build. The fork worker, `workers/fork-worker.js`, is a single bundle of its
 * whole module graph, the runtime dependencies inlined (the optional peers stay imports). A
 * worker thread starts in a fresh isolate and loads its graph again, and the suite starts about
 * 290 of them: one file instead of hundreds cut the CPU of a thread's start from 785 to 272 ms
 * (measured side by side in one run: `npx tsx bench/suite/worker-start.ts`). The shipped worker keeps
 * its imports, so a user's installed SDK is the one it runs; `.ci/pack-check` runs that one.
 * The command the tests spawn is the other (`bundleCli`); in-process runs
 * (test/cli/run-cli.ts) and an install without the optional peers
 * (test/cli/optional-peers-missing.test.ts) use the file-per-module build, as dist/ is laid out.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_DIRS = ['src', 'workers'];
const WORKER = 'workers/fork-worker.ts';
const CLI = 'src/cli/main.ts';
/**
 * The command as the spawned processes run it (`CLI_BUNDLE_MAIN` in the build): its module graph
 * split into chunks (a command loads only its own), the runtime dependencies inlined. Every
 * chunk sits as deep as `src/core/pool/`, so the fork worker's path (`../../../workers/`,
 * src/core/pool/worker-file.ts) names this build's worker from any of them.
 */
export const CLI_BUNDLE = 'cli-bundle';
export const CLI_BUNDLE_MAIN = `${CLI_BUNDLE}/src/cli/main.js`;
/** What both builds write: ES modules for this package's oldest Node, with linked source maps. */
const NODE_ESM = {
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'error',
} as const;
/** The inlined CommonJS dependencies call `require` for Node's own modules. */
const REQUIRE_BANNER =
  "import { createRequire as createRequireOfBundle } from 'node:module';\nconst require = createRequireOfBundle(import.meta.url);";

/** Builds older than this, other than the current one, are removed (runs last minutes, not days). */
const STALE_MS = 24 * 3600_000;

/** Every file under `dir`, sorted (the build's inputs; the test lists the bundle's chunks with it). */
export function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

/** The content key of a build: every input file's path and bytes. */
function sourceKey(root: string, inputs: string[]): string {
  const hash = createHash('sha256');
  hash.update(`esbuild ${esbuildVersion}\0`);
  const lock = join(root, 'package-lock.json');
  // esbuild reads tsconfig.json too (class fields, decorators, JSX): an edit of it is an edit of the output
  const manifests = [join(root, 'package.json'), lock, join(root, 'tsconfig.json')].filter((f) => existsSync(f));
  for (const file of [...inputs, ...manifests, fileURLToPath(import.meta.url)]) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Every import stays an import: relative `.ts` ones point at the `.js` file built beside it. */
const keepImports: Plugin = {
  name: 'keep-imports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      // JSON is inlined: an external import would lose its `with { type: 'json' }`.
      if (args.kind === 'entry-point' || args.path.endsWith('.json')) return undefined;
      return { path: args.path.replace(/\.ts$/, '.js'), external: true };
    });
  },
};

/**
 * Build the sources of the package at `root` (or find this content's build) and return its
 * folder, under `root`'s node_modules/.cache.
 */
export async function builtSources(root = ROOT): Promise<string> {
  const cache = join(root, 'node_modules', '.cache', 'forkcache-test-build');
  const inputs = SOURCE_DIRS.flatMap((d) => files(join(root, d)));
  const out = join(cache, sourceKey(root, inputs));
  if (existsSync(join(out, 'complete'))) return out;
  mkdirSync(cache, { recursive: true });
  const staging = mkdtempSync(join(cache, 'staging-'));
  try {
    await build({
      entryPoints: inputs.filter((f) => f.endsWith('.ts')),
      outbase: root,
      outdir: staging,
      bundle: true,
      plugins: [keepImports],
      ...NODE_ESM,
    });
    if (existsSync(join(root, WORKER))) await bundleWorker(root, staging);
    if (existsSync(join(root, CLI))) await bundleCli(root, staging);
    writeFileSync(join(staging, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(staging, 'complete'), '');
    try {
      renameSync(staging, out);
    } catch (error) {
      // Another run built the same content first: its folder is as good as ours.
      if (!existsSync(join(out, 'complete'))) throw error;
      rmSync(staging, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  removeStale(cache, out);
  return out;
}

/**
 * The fork worker, one file: its graph and the runtime dependencies, the peers left as imports.
 * The file-per-module worker stays beside it as `fork-worker.modules.js` (the bench compares them).
 */
async function bundleWorker(root: string, staging: string): Promise<void> {
  const built = join(staging, WORKER.replace(/\.ts$/, '.js'));
  renameSync(built, built.replace(/\.js$/, '.modules.js'));
  rmSync(`${built}.map`, { force: true });
  await build({
    entryPoints: [join(root, WORKER)],
    outfile: built,
    bundle: true,
    external: peersOf(root),
    banner: { js: REQUIRE_BANNER },
    ...NODE_ESM,
  });
}

/**
 * The command, bundled with code splitting (`CLI_BUNDLE`). Node loads the `run` command's
 * graph from it in half the CPU of the file-per-module build: 776 against 1,525 ms for
 * `run --help`, 2.7 against 3.4 s for a whole `demo` (`npx tsx bench/suite/cli-start.ts`), as
 * `run --help` opens 104 JavaScript files instead of about 480 (349 of them the sources', 95 zod's).
 * The suite spawns about 80 commands. Piscina stays an import (it finds its own worker file
 * beside it), and so do the optional peers.
 */
async function bundleCli(root: string, staging: string): Promise<void> {
  await build({
    entryPoints: [join(root, CLI)],
    outdir: join(staging, CLI_BUNDLE),
    entryNames: 'src/cli/[name]',
    chunkNames: 'src/cli/[name]-[hash]',
    bundle: true,
    splitting: true,
    external: [...peersOf(root), 'piscina'],
    banner: { js: REQUIRE_BANNER },
    ...NODE_ESM,
  });
}

function peersOf(root: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    peerDependencies?: Record<string, string>;
  };
  return Object.keys(manifest.peerDependencies ?? {});
}

function removeStale(cache: string, current: string): void {
  const now = Date.now();
  for (const name of readdirSync(cache)) {
    const dir = join(cache, name);
    if (dir !== current && now - statSync(dir).mtimeMs > STALE_MS) rmSync(dir, { recursive: true, force: true });
  }
}
