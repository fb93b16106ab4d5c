import { VERSION } from '../version.ts';

/** Errors that mean the input was wrong (exit code 2), not that the work failed (1). */
const BAD_INPUT = new Set([
  'INVALID_ARGUMENT',
  'CLI_USAGE',
  'SNAPSHOT_INVALID',
  'FORK_EMPTY_DIRECTIVE',
  'FORK_DIRECTIVE_TOO_LARGE',
  'FORK_DIRECTIVE_HAS_TAG',
  'TOOLS_UNRUNNABLE',
  'REPORT_FILE_MISSING',
  'REPORT_FILE_INVALID',
  'TRANSCRIPT_INVALID',
  'MODEL_RETIRED',
  'MODEL_CATALOGUE_INVALID',
  'GIT_DIRTY_WORKTREE',
  'RUN_DIR_UNSIGNED',
  'RUN_DIR_OTHER_KEY',
  'RUN_DIR_TAMPERED',
  'RUN_DIR_LOCKED',
  'RUN_KEY_UNAVAILABLE',
  'REDIS_AUTH_FAILED',
]);

// The `forkcache` command. Exit codes: 0 success, 1 some work failed, 2 bad input.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  // Answered before the command tree loads: the commands import the SDK, the engine and the
  // emulator (over a second on a busy 2-core machine), none of which the version needs.
  process.stdout.write(`${VERSION}\n`);
} else {
  const { createProgram } = await import('./program.ts');
  await createProgram(args)
    .then((program) => program.parseAsync(process.argv))
    .catch((err: unknown) => {
      const code = (err as { code?: unknown }).code;
      process.stderr.write(`forkcache: ${(err as Error).message ?? String(err)}\n`);
      process.exitCode = typeof code === 'string' && BAD_INPUT.has(code) ? 2 : 1;
    });
}
