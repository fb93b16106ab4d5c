import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { lastUserText } from '../../../src/integrations/emulator/scripts/conversation.ts';
import { formatReport } from '../../../src/integrations/emulator/scripts/directive.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import { runForkLoop } from '../../../src/core/loop/run-fork.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { SCRIPT_HEADER } from '../../../src/integrations/emulator/scripts/types.ts';
import { CONTINUE_AFTER_MAX_TOKENS } from '../../../src/core/wire/fork-text.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

// Issue 23: forks that did nothing came back `completed`. A turn cut off at max_tokens, a report
// that says "not done", a report without its fields and an empty answer each end not done now.

const REPORT = formatReport({ scope: 'the task', result: 'done', keyFiles: [], filesChanged: [], issues: [] });
const say = (text: string, stop?: 'max_tokens'): ReturnType<ScriptedModel['respond']> => ({
  content: text === '' ? [] : [{ type: 'text', text }],
  ...(stop ? { stop_reason: stop } : {}),
});

const scripts: ScriptedModel[] = [
  // cut off once; after the loop's continuation it writes its report
  {
    name: 'cut-once',
    respond: ({ request }) =>
      lastUserText(request.messages)?.text === CONTINUE_AFTER_MAX_TOKENS
        ? say(REPORT)
        : say('Scope: the ta', 'max_tokens'),
  },
  { name: 'cut-always', respond: () => say('thinking about it', 'max_tokens') },
  { name: 'cut-empty', respond: () => say('', 'max_tokens') },
  { name: 'says-not-done', respond: () => say(REPORT.replace('Result: done', 'Result: not done')) },
  { name: 'no-fields', respond: () => say('I renamed everything, all good.') },
  { name: 'silent', respond: () => say('') },
];

const emulator = sharedEmulator({ scripts });

async function run(script: string, tag: string, maxTurns?: number) {
  const prefix = freeze(bigSnapshot(`${tag}-${Date.now()}`));
  const client = new Anthropic({
    apiKey: 'test',
    baseURL: emulator.current.url,
    maxRetries: 0,
    defaultHeaders: { [SCRIPT_HEADER]: script },
  });
  return runForkLoop({
    prefix,
    child: prefix.child('do the task'),
    transport: { send: (body, options) => streamMessageBytes(client, body, options) },
    tools: createToolExecutor({ workspace: workspace() }),
    ...(maxTurns ? { maxTurns } : {}),
  });
}

describe('a fork that stopped at max_tokens without a tool call', () => {
  it('is asked to continue once, and completes when the continuation reports', async () => {
    const outcome = await run('cut-once', 'cut-once');
    expect(outcome.status).toBe('completed');
    expect(outcome.requests.map((r) => r.stopReason)).toEqual(['max_tokens', 'end_turn']);
    // the continuation is a user turn of the fork's own conversation
    expect(outcome.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']);
    expect(outcome.messages[1]).toEqual({ role: 'user', content: [{ type: 'text', text: CONTINUE_AFTER_MAX_TOKENS }] });
  });

  it('ends truncated, with its own code, when the continuation stops at max_tokens too', async () => {
    const outcome = await run('cut-always', 'cut-always');
    expect(outcome.status).toBe('truncated');
    expect(outcome.error).toMatchObject({ code: 'FORK_TRUNCATED' });
    expect(outcome.turns).toBe(2);
  });

  it('ends truncated on its last allowed turn, never failed for asking one turn more than maxTurns', async () => {
    const outcome = await run('cut-once', 'cut-last', 1);
    expect(outcome.status).toBe('truncated');
    expect(outcome.error).toMatchObject({
      code: 'FORK_TRUNCATED',
      message: 'turn 1 stopped at max_tokens and the fork has no turn left (maxTurns)',
    });
    expect(outcome.turns).toBe(1);
  });

  it('ends truncated at once when the turn was cut before any output (an empty turn cannot be continued)', async () => {
    const outcome = await run('cut-empty', 'cut-empty');
    expect(outcome.status).toBe('truncated');
    expect(outcome.error).toMatchObject({
      code: 'FORK_TRUNCATED',
      message: 'turn 1 stopped at max_tokens before any output',
    });
    expect(outcome.turns).toBe(1);
  });
});

describe('a fork whose answer does not say the work is done', () => {
  it('ends not_done when its report says Result: not done', async () => {
    const outcome = await run('says-not-done', 'not-done');
    expect(outcome.status).toBe('not_done');
    expect(outcome.error).toMatchObject({ code: 'FORK_NOT_DONE', message: "the fork's report says Result: not done" });
    expect(outcome.report?.result).toBe('not done');
  });

  it('ends not_done when its report lacks Scope: and Result:, or it says nothing', async () => {
    const fields = await run('no-fields', 'no-fields');
    expect(fields.status).toBe('not_done');
    expect(fields.error?.message).toMatch(/lacks Scope: and Result:/);
    const silent = await run('silent', 'silent');
    expect(silent.status).toBe('not_done');
    expect(silent.error?.message).toMatch(/empty final text/);
  });

  it('ends not_done on a directive the refactor model cannot act on (its report says so)', async () => {
    const outcome = await run('refactor', 'unknown');
    expect(outcome.status).toBe('not_done');
    expect(outcome.error?.message).toBe("the fork's report says Result: not done; Issues: unknown directive");
  });
});

describe('a turn the main thread refused because the fork was cancelled', () => {
  it('ends the fork cancelled, not failed, before its own cancel arrives', async () => {
    // at 300 worktree forks a Ctrl-C reached one fork as the refused permit first: `failed`, INTERNAL
    const prefix = freeze(bigSnapshot(`refused-${Date.now()}`));
    const outcome = await runForkLoop({
      prefix,
      child: prefix.child('do the task'),
      transport: { send: () => Promise.reject(new Error('no request is sent')) },
      tools: createToolExecutor({ workspace: workspace() }),
      gate: { acquire: () => Promise.reject(new ForkcacheError('FORK_CANCELLED', 'fork cancelled')) },
    });
    expect(outcome.status).toBe('cancelled');
    expect(outcome.error).toMatchObject({ code: 'FORK_CANCELLED' });
  });
});
