import { defineConfig } from 'vitest/config';

// Piscina workers import .ts sources: the loader has to be inside each worker thread,
// and vitest only transforms the test's own imports (see docs/toolchain notes).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    execArgv: ['--import', 'tsx'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
