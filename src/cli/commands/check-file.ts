import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ForkcacheError } from '../../core/util/errors.ts';
import { checkFileText, parseCheckFileArgs } from '../../core/tools/checks/file-check.ts';
import { printErr, printOut } from '../terminal-safe.ts';

/**
 * Register `forkcache check-file [--parses] [--no-identifier NAME]... FILE`: the default per-fork
 * check of a rename (src/core/tools/checks/file-check.ts). A plan's check that is exactly this command runs
 * in the fork's thread (src/core/tools/checks/run.ts); here it is the same check for a shell.
 */
export function registerCheckFileCommand(program: Command): void {
  program
    .command('check-file')
    .description(
      "a file-local check for a plan: the file still parses (--parses), and NAME is none of its identifiers (--no-identifier NAME; strings and comments may keep it); by tree-sitter's grammars for TypeScript, JavaScript, Python, Go, Rust, Java, C#, C++, Ruby, PHP and bash (the optional @vscode/tree-sitter-wasm; without it, a word check). Exit 0 when it holds, 1 with the places when not",
    )
    .argument('<args...>', '--parses, --no-identifier NAME and --allow QUALIFIED (each repeatable), and the file')
    // `--no-identifier` is one option with a value, never commander's negation of `--identifier`
    .allowUnknownOption(true)
    .helpOption('-h, --help')
    .action(async (args: string[]) => {
      const spec = parseCheckFileArgs(args);
      let text: string;
      try {
        text = readFileSync(spec.file, 'utf8');
      } catch (err) {
        throw new ForkcacheError('INVALID_FLAG', `file: ${spec.file} cannot be read (${(err as Error).message})`, {
          data: { field: 'file' },
        });
      }
      const verdict = await checkFileText(spec, text);
      for (const problem of verdict.problems) printOut(`${problem}\n`);
      for (const note of verdict.notes) printErr(`note: ${note}\n`);
      if (!verdict.ok) process.exitCode = 1;
    });
}
