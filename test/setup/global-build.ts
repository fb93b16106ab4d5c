import { builtSources } from './built-sources.ts';

/**
 * vitest's global setup: build the sources once (or find this content's build) before any
 * test file runs, and name the folder in the environment the test workers inherit. The fork
 * workers (src/core/pool/worker-file.ts) and the spawned commands (test/cli/run-cli.ts) run from it.
 */
export default async function setup(): Promise<void> {
  process.env['FORKCACHE_BUILT_SOURCES'] = await builtSources();
}
