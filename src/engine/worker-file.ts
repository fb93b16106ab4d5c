import { fileURLToPath } from 'node:url';

/**
 * The fork worker's file, next to this module's build: `.ts` when running from sources (tsx,
 * vitest), `.js` from `dist/`. `rewriteRelativeImportExtensions` does not rewrite URLs.
 */
export function forkWorkerFile(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`../../workers/fork-worker.${ext}`, import.meta.url));
}

/**
 * Node flags for worker threads: the tsx loader when running from `.ts` sources (a worker
 * does not inherit vitest's transform, and an explicit `execArgv` replaces the inherited one),
 * the parent's own flags otherwise.
 */
export function forkWorkerExecArgv(): string[] {
  return import.meta.url.endsWith('.ts') ? ['--import', 'tsx'] : [...process.execArgv];
}
