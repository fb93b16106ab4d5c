import type Anthropic from '@anthropic-ai/sdk';
import {
  CHECK_FAILED_TAG,
  CONTINUE_AFTER_MAX_TOKENS,
  DIRECTIVE_PREFIX,
  FORK_FIXUP_TAG,
  FORK_RETRY_TAG,
  OUTPUT_INVALID_TAG,
} from '../wire/fork-text.ts';
import { textOf } from './messages.ts';
import type { LoopPrompt } from './types.ts';

/*
 * The user turns the loop adds to a fork's own conversation, and how to recognise them again
 * in that conversation. The loop derives its state from them (was the last turn already a
 * continuation? how many checks failed since the last fresh attempt?), so a fork resumed from
 * its transcript picks up exactly where it was.
 */

/** Most characters of a check's output the fork is shown (its end: compilers print the summary last). */
const CHECK_OUTPUT_TAIL_CHARS = 4000;

const CHECK_OPEN = `<${CHECK_FAILED_TAG}>`;
const RETRY_OPEN = `<${FORK_RETRY_TAG}>`;
const FIXUP_OPEN = `<${FORK_FIXUP_TAG}>`;
const OUTPUT_OPEN = `<${OUTPUT_INVALID_TAG}>`;

/** The last `max` characters of a text, saying how much was cut. */
export function tail(text: string, max = CHECK_OUTPUT_TAIL_CHARS): string {
  return text.length <= max ? text : `[${text.length - max} earlier characters cut]\n${text.slice(-max)}`;
}

// the output comes from the fork's workspace: it must not close the tag it is quoted in
const neutralise = (text: string, tag: string): string => text.replaceAll(`</${tag}`, `&lt;/${tag}`);

export function continuePrompt(): LoopPrompt {
  return { reason: 'continue', text: CONTINUE_AFTER_MAX_TOKENS };
}

export function checkPrompt(check: {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  outputTail: string;
  attempt: number;
  attempts: number;
}): LoopPrompt {
  const how = check.timedOut
    ? 'timed out and was killed'
    : check.exitCode === null
      ? 'was killed by a signal'
      : `exited with code ${check.exitCode}`;
  const text = [
    CHECK_OPEN,
    `The check of your work failed (check ${check.attempt} of ${check.attempts}): \`${check.command}\` ${how} after ${(check.durationMs / 1000).toFixed(1)} s.`,
    check.outputTail.trim() === ''
      ? 'It printed nothing.'
      : `Its output:\n${neutralise(check.outputTail, CHECK_FAILED_TAG)}`,
    'Fix what it reports in the workspace, then end with your complete report again.',
    `</${CHECK_FAILED_TAG}>`,
  ].join('\n');
  return { reason: 'check', text };
}

export function retryPrompt(
  previous: { status: string; code?: string; message?: string },
  directive: string,
): LoopPrompt {
  const why = previous.code ? ` (${previous.code}: ${previous.message ?? ''})` : '';
  const text = [
    RETRY_OPEN,
    `This fork ended \`${previous.status}\`${neutralise(why, FORK_RETRY_TAG)}, and the run was resumed to retry it. Every change you made is still in the workspace. Carry out the directive again from the current state of the files, and end with your complete report.`,
    `${DIRECTIVE_PREFIX}${neutralise(directive, FORK_RETRY_TAG)}`,
    `</${FORK_RETRY_TAG}>`,
  ].join('\n');
  return { reason: 'retry', text };
}

/**
 * The integration step's fix-up turn: the repository-wide check failed once this fork's
 * branch was merged with the others, and `output` is what it printed about the fork's files.
 * The fork continues its own conversation (its history is cached), so it knows what it did.
 */
export function fixupPrompt(check: {
  command: string;
  exitCode: number | null;
  output: string;
  files: readonly string[];
}): LoopPrompt {
  const how = check.exitCode === null ? 'was killed' : `exited with code ${check.exitCode}`;
  const text = [
    FIXUP_OPEN,
    `Your change was merged with the other forks' changes, and the whole repository's check \`${check.command}\` ${how}. Its output names ${check.files.length > 0 ? `your file(s) ${check.files.join(', ')}` : 'no file of yours; your change was found to break it by merging the forks one by one'}:`,
    neutralise(tail(check.output), FORK_FIXUP_TAG),
    "Your files are as you left them; the other forks' changes are not in your workspace. Fix what the output reports in your files (only what your directive is about), then end with your complete report again.",
    `</${FORK_FIXUP_TAG}>`,
  ].join('\n');
  return { reason: 'fixup', text };
}

/**
 * The one repair turn of a fork whose report did not match the fan-out's output schema: the
 * validation errors quoted, and a request to report again. It continues the fork's own
 * conversation, so its request reads the fork's history from the cache.
 */
export function outputPrompt(errors: string): LoopPrompt {
  const text = [
    OUTPUT_OPEN,
    `Your report's result does not match the required output schema: ${neutralise(tail(errors), OUTPUT_INVALID_TAG)}`,
    'Do not redo the work. End with your complete report again, its Result: one JSON value in a ```json fenced block that matches the schema.',
    `</${OUTPUT_INVALID_TAG}>`,
  ].join('\n');
  return { reason: 'output', text };
}

/** What a user message of the fork's own conversation is: one the loop added, or not. */
export function promptReason(message: Anthropic.MessageParam | undefined): LoopPrompt['reason'] | undefined {
  if (message?.role !== 'user') return undefined;
  const text = textOf(message);
  if (text === CONTINUE_AFTER_MAX_TOKENS) return 'continue';
  if (text.startsWith(CHECK_OPEN)) return 'check';
  if (text.startsWith(RETRY_OPEN)) return 'retry';
  if (text.startsWith(FIXUP_OPEN)) return 'fixup';
  if (text.startsWith(OUTPUT_OPEN)) return 'output';
  return undefined;
}

/** Checks that failed since the fork's last fresh attempt (its directive, or the last retry). */
export function failedChecksSinceAttempt(own: readonly Anthropic.MessageParam[]): number {
  let failed = 0;
  for (let i = own.length - 1; i >= 0; i--) {
    const reason = promptReason(own[i]);
    // a retry or a fix-up is a fresh attempt: the check gets its retries again
    if (reason === 'retry' || reason === 'fixup') break;
    if (reason === 'check') failed += 1;
  }
  return failed;
}

export function asUserMessage(prompt: LoopPrompt): Anthropic.MessageParam {
  return { role: 'user', content: [{ type: 'text', text: prompt.text }] };
}
