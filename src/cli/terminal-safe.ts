import { terminalSafeLines } from '../core/util/terminal-text.ts';

/*
 * Where every command prints. Any text a command prints may hold what a model wrote (a fork's
 * report, a file name or file contents, an error naming a path the fork made), and the model
 * can be steered by any file it read: so all of it is escaped on the way out (terminal-text.ts),
 * newlines and tabs kept. JSON lines pass through unchanged in meaning (the escapes are JSON's).
 * The live board adds its own cursor and colour sequences, and escapes the fork's text itself
 * (board-state.ts, progress-board.ts).
 */

/** Write `text` to standard output, every control character but newline and tab escaped. */
export function printOut(text: string): void {
  process.stdout.write(terminalSafeLines(text));
}

/** Write `text` to standard error, every control character but newline and tab escaped. */
export function printErr(text: string): void {
  process.stderr.write(terminalSafeLines(text));
}
