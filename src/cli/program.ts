import { Command } from 'commander';
import { VERSION } from '../core/util/version.ts';
import { COMMANDS } from './commands/table.ts';

/**
 * Build the command tree for `args` (the arguments after the program name): only the command
 * they name, or every command when they name none of them (`--help`, `help run`, a typo, which
 * commander then answers with the list and its suggestion).
 */
export async function createProgram(args: readonly string[] = process.argv.slice(2)): Promise<Command> {
  const program = new Command('forkcache')
    .description('Run LLM fork subagents in parallel on one byte-identical, prompt-cached prefix.')
    .version(VERSION, '-v, --version')
    .showHelpAfterError()
    // commander's usage errors (and --help) are thrown, not exited: `main` (cli-main.ts) turns
    // them into exit code 2 (0), so the command also runs in-process.
    .exitOverride();
  const named = COMMANDS.filter((row) => row.name === args[0]);
  const registers = await Promise.all((named.length > 0 ? named : COMMANDS).map((row) => row.register()));
  for (const register of registers) register(program);
  return program;
}
