import { resolve } from 'node:path';

/** A path as one shell word: left bare when it is plain, single-quoted otherwise. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command that continues an interrupted run (Ctrl-C, a spend cap, `--max-usd`), with the
 * run directory absolute: a relative path means nothing once the user is in another folder,
 * and a demo's workspace is a temporary one the user never chose.
 */
export function resumeCommand(runDir: string, extra: readonly string[] = []): string {
  return ['forkcache', 'resume', shellWord(resolve(runDir)), ...extra.map(shellWord)].join(' ');
}
