/**
 * Whether the summary lists every fork. Not when the live board already printed each
 * finished fork to the same terminal: the screen then holds each fork once. A summary that
 * goes to a file or a pipe (or beside `--json`'s plain progress) is complete on its own.
 */
export function forkRowsInSummary(
  plain: boolean,
  streams: { stdout: { isTTY?: boolean }; stderr: { isTTY?: boolean } } = process,
): boolean {
  return plain || streams.stderr.isTTY !== true || streams.stdout.isTTY !== true;
}
