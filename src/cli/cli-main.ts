import { CommanderError } from 'commander';
import { exitClassOf } from '../core/util/errors.ts';
import { printErr, printOut } from './terminal-safe.ts';
import { VERSION } from '../core/util/version.ts';

/**
 * The `forkcache` command as a function: runs the command `args` name (the arguments after the
 * program name) and resolves to its exit code, writing to `process.stdout`/`process.stderr`.
 * `main.ts` is the process entry around it; tests call it in-process (test/cli/run-cli.ts),
 * which is why nothing here calls `process.exit`: commander's usage errors come back as a
 * `CommanderError` and become exit code 2 (`--help` and `--version`, 0).
 */
export async function main(args: readonly string[]): Promise<number> {
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
    // Answered before the command tree loads: the commands import the SDK, the engine and the
    // emulator (over a second on a busy 2-core machine), none of which the version needs.
    printOut(`${VERSION}\n`);
    return 0;
  }
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    // the provider adapters, handed to core (it never imports a provider): src/providers/registry.ts
    const [{ createProgram }, { useProviders }, { PROVIDERS }] = await Promise.all([
      import('./program.ts'),
      import('../core/engine/providers-registered.ts'),
      import('../providers/registry.ts'),
    ]);
    useProviders(PROVIDERS);
    const program = await createProgram(args);
    await program.parseAsync(['node', 'forkcache', ...args]);
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      return err.exitCode === 0 ? 0 : 2;
    }
    printErr(`forkcache: ${(err as Error).message ?? String(err)}\n`);
    return exitClassOf(err) === 'input' ? 2 : 1;
  } finally {
    process.exitCode = before;
  }
}
