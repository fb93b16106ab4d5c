import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The fork worker's file, `workers/fork-worker` at the package's top (`dist/workers/` once
 * built, as `dist/src/` mirrors `src/`): `.ts` when running from sources (tsx, vitest), `.js`
 * from `dist/`. `rewriteRelativeImportExtensions` does not rewrite URLs.
 *
 * From sources, `FORKCACHE_BUILT_SOURCES` may name a JavaScript build of these same sources
 * (the test suite makes one per content, test/setup/built-sources.ts): its worker then runs
 * without the tsx loader, which costs each worker thread a loader, its hooks thread and a
 * transform of the worker's whole module graph.
 */
export function forkWorkerFile(): string {
  if (import.meta.url.endsWith('.ts')) {
    const built = builtWorker();
    if (built !== undefined) return built;
    return fileURLToPath(new URL('../../../workers/fork-worker.ts', import.meta.url));
  }
  return fileURLToPath(new URL('../../../workers/fork-worker.js', import.meta.url));
}

/**
 * Node flags for worker threads: the tsx loader when running from `.ts` sources (a worker
 * does not inherit vitest's transform, and an explicit `execArgv` replaces the inherited one),
 * none for a build of them, the parent's own flags otherwise.
 *
 * The loader is named by its absolute URL, resolved from this package: a bare `--import tsx`
 * is resolved from the current directory, and `forkcache run` from any other directory died
 * with "Cannot find package 'tsx'" (issue 15, case 7).
 */
export function forkWorkerExecArgv(): string[] {
  if (!import.meta.url.endsWith('.ts')) return [...process.execArgv];
  if (builtWorker() !== undefined) return [];
  return ['--import', tsxLoaderUrl()];
}

function builtWorker(): string | undefined {
  const dir = process.env['FORKCACHE_BUILT_SOURCES'];
  if (dir === undefined || dir === '') return undefined;
  const file = join(dir, 'workers', 'fork-worker.js');
  return existsSync(file) ? file : undefined;
}

/** The tsx loader's file URL, as this package resolves it. */
export function tsxLoaderUrl(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}
