import { splitReadResult } from '../../../core/wire/read-file-text.ts';
import type { ToolExchange } from './conversation.ts';

/*
 * Reading one file whole through read_file, page by page: a file over the read limit comes
 * back cut at a whole line with a note naming the next offset (src/core/wire/read-file-text.ts), and
 * a careful model reads on until it has it all. Stateless: the pages are found again in the
 * conversation every turn.
 */

/** Where reading a file stands: the next call to make, an error, or the whole text. */
type PagedRead =
  | { kind: 'call'; input: Record<string, unknown> }
  | { kind: 'error'; text: string }
  | { kind: 'done'; text: string; pages: number; last: number };

/** A read_file of `path` from its first line (no offset, or offset 1). */
export const isFirstPage = (e: ToolExchange, path: string): boolean =>
  e.name === 'read_file' && e.input['path'] === path && (e.input['offset'] === undefined || e.input['offset'] === 1);

/**
 * A tool result saying the call never ran, or only read, when an earlier run stopped: resume
 * tells the model to run it again (src/core/pool/resume-messages.ts), and a careful model does, once.
 */
const RUN_AGAIN = /Run it again if (it is still needed|you still need its result)/;

/** Whether `e` failed only because a run stopped, and is worth one more try. */
export function runAgain(calls: readonly ToolExchange[], e: ToolExchange): boolean {
  if (!e.result?.isError || !RUN_AGAIN.test(e.result.text)) return false;
  const same = (o: ToolExchange): boolean => o.name === e.name && JSON.stringify(o.input) === JSON.stringify(e.input);
  return calls.filter((o) => same(o) && o.result?.isError && RUN_AGAIN.test(o.result.text)).length <= 1;
}

/**
 * The file as read by the pages that follow the first-page read `calls[first]`: each next page
 * is the first later read of `path` at the offset the previous page named.
 */
export function pagedRead(calls: readonly ToolExchange[], first: number, path: string): PagedRead {
  let text = '';
  let pages = 0;
  let at = first;
  for (;;) {
    const page = calls[at]!;
    if (page.result === undefined) return { kind: 'error', text: 'read_file gave no result' };
    if (runAgain(calls, page)) return { kind: 'call', input: page.input };
    if (page.result.isError) return { kind: 'error', text: page.result.text };
    const part = splitReadResult(page.result.text);
    text += part.text;
    pages += 1;
    if (part.nextOffset === undefined) return { kind: 'done', text, pages, last: at };
    // the first such read, a try that a crash stopped aside (its retry is the one that counts)
    const reads = (e: ToolExchange, i: number): boolean =>
      i > at && e.name === 'read_file' && e.input['path'] === path && e.input['offset'] === part.nextOffset;
    const stopped = (e: ToolExchange): boolean => e.result?.isError === true && RUN_AGAIN.test(e.result.text);
    let next = calls.findIndex((e, i) => reads(e, i) && !stopped(e));
    if (next < 0) next = calls.findLastIndex(reads);
    if (next < 0) return { kind: 'call', input: { path, offset: part.nextOffset } };
    at = next;
  }
}
