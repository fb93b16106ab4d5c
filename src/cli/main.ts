import { createProgram } from './program.ts';

// The `forkcache` command. Exit codes: 0 success, 1 some work failed, 2 bad input.
createProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    const code = (err as { code?: unknown }).code;
    process.stderr.write(`forkcache: ${(err as Error).message ?? String(err)}\n`);
    process.exitCode = code === 'INVALID_ARGUMENT' || code === 'CLI_USAGE' ? 2 : 1;
  });
