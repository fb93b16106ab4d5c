import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The fork worker's file, `workers/fork-worker` at the package's top (`dist/workers/` once
 * built, as `dist/src/` mirrors `src/`): `.ts` when running from sources (tsx, vitest), `.js`
 * from `dist/`. `rewriteRelativeImportExtensions` does not rewrite URLs.
 */
export function forkWorkerFile(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`../../workers/fork-worker.${ext}`, import.meta.url));
}

/**
 * Node flags for worker threads: the tsx loader when running from `.ts` sources (a worker
 * does not inherit vitest's transform, and an explicit `execArgv` replaces the inherited one),
 * the parent's own flags otherwise.
 *
 * The loader is named by its absolute URL, resolved from this package: a bare `--import tsx`
 * is resolved from the current directory, and `forkcache run` from any other directory died
 * with "Cannot find package 'tsx'" (issue 15, case 7).
 */
export function forkWorkerExecArgv(): string[] {
  if (!import.meta.url.endsWith('.ts')) return [...process.execArgv];
  return ['--import', tsxLoaderUrl()];
}

/** The tsx loader's file URL, as this package resolves it. */
export function tsxLoaderUrl(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}
