import { defineConfig } from 'vitest/config';

// Piscina workers import .ts sources: the loader has to be inside each worker thread,
// and vitest only transforms the test's own imports (see docs/toolchain notes).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    execArgv: ['--import', 'tsx'],
    // A hang guard, not a speed check: CLI tests run real forkcache processes, and on a busy
    // 2-core machine (load 20+) one takes minutes. Tests wait on events, never on time.
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
});
