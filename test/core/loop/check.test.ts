import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { runForkLoop } from '../../../src/core/loop/run-fork.ts';
import type { LoopCheck } from '../../../src/core/loop/types.ts';
import { startFromTranscript } from '../../../src/core/pool/fork-attempts.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { readTranscript } from '../../../src/core/run-dir/transcript-reader.ts';
import { JsonlTranscript } from '../../../src/core/run-dir/transcript.ts';
import { createToolExecutor, type ToolExecutor } from '../../../src/core/tools/executor.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

// Issue 23, per-fork checks: the plan's check runs in the fork's workspace after it reports
// done; a failure goes back to the fork (checkRetries times), then the fork ends check_failed.

const emulator = sharedEmulator({ script: 'refactor' });
const DIRECTIVE = 'rename fetchData to loadData in users.ts';

function checkOf(tools: ToolExecutor, command: string, retries = 1): LoopCheck {
  return { command, retries, run: (signal) => tools.check(command, { signal, timeoutMs: 30_000 }) };
}

async function runWithCheck(command: string, retries = 1) {
  const ws = workspace({ 'users.ts': 'export const fetchData = 1;\nexport const load = fetchData;\n' });
  const prefix = freeze(bigSnapshot(`check-${Date.now()}-${Math.random()}`));
  const client = new Anthropic({ apiKey: 'test', baseURL: emulator.current.url, maxRetries: 0 });
  const transcriptFile = join(mkdtempSync(join(tmpdir(), 'fc-check-')), 'f01.jsonl');
  const transcript = new JsonlTranscript(transcriptFile);
  transcript.start('f01', prefix.sha256, DIRECTIVE);
  const tools = createToolExecutor({ workspace: ws });
  const options = {
    prefix,
    transport: {
      send: (body: Uint8Array, o: Parameters<typeof streamMessageBytes>[2]) => streamMessageBytes(client, body, o),
    },
    tools,
    transcript,
    check: checkOf(tools, command, retries),
  };
  const outcome = await runForkLoop({ ...options, child: prefix.child(DIRECTIVE) });
  return { ws, prefix, outcome, transcriptFile, options };
}

describe("a plan's per-fork check", () => {
  it('passes: the fork completes, the check is in its outcome and transcript', async () => {
    const { ws, outcome, transcriptFile } = await runWithCheck(
      '! grep -qw fetchData users.ts && grep -q loadData users.ts',
    );
    expect(outcome.status).toBe('completed');
    expect(readFileSync(join(ws, 'users.ts'), 'utf8')).not.toContain('fetchData');
    expect(outcome.checks).toEqual([
      expect.objectContaining({ attempt: 1, exitCode: 0, passed: true, command: expect.stringContaining('grep') }),
    ]);
    expect(readTranscript(transcriptFile).checks).toEqual(outcome.checks);
  });

  it('fails, its output goes back to the fork as a new turn, the fork fixes it, the check passes', async () => {
    // fails once (it leaves a mark in the workspace), then passes: what a fork's fix would do
    const { outcome, transcriptFile } = await runWithCheck(
      'test -e .checked-once || { touch .checked-once; echo "users.ts: still broken"; exit 1; }',
    );
    expect(outcome.status).toBe('completed');
    expect(outcome.checks?.map((c) => [c.attempt, c.exitCode, c.passed])).toEqual([
      [1, 1, false],
      [2, 0, true],
    ]);
    const prompt = outcome.messages.find(
      (m) => m.role === 'user' && JSON.stringify(m.content).includes('<check-failed>'),
    );
    expect(JSON.stringify(prompt)).toContain('users.ts: still broken');
    const read = readTranscript(transcriptFile);
    expect(read.turns.some((t) => t.prompt?.reason === 'check')).toBe(true);
    expect(read.end?.status).toBe('completed');
  });

  it('keeps failing: after checkRetries the fork ends check_failed with the exit code and the output tail', async () => {
    const { outcome, transcriptFile } = await runWithCheck('echo "type error in users.ts" >&2; exit 3', 1);
    expect(outcome.status).toBe('check_failed');
    expect(outcome.error).toMatchObject({ code: 'FORK_CHECK_FAILED', data: { exitCode: 3, attempts: 2 } });
    expect(outcome.checks).toHaveLength(2);
    expect(outcome.checks![1]!.outputTail).toContain('type error in users.ts');
    const read = readTranscript(transcriptFile);
    expect(read.end).toMatchObject({ status: 'check_failed', error: { code: 'FORK_CHECK_FAILED' } });
    expect(read.checks.map((c) => c.passed)).toEqual([false, false]);
  });

  it('runs again on resume when the process stopped after the final answer, sending nothing', async () => {
    const { outcome, transcriptFile, options } = await runWithCheck('exit 0');
    expect(outcome.status).toBe('completed');
    // a crash between the final turn and its check: drop the check and end records
    const lines = readFileSync(transcriptFile, 'utf8').trimEnd().split('\n');
    const kept = lines.filter((l) => !/"type":"(check|end)"/.test(l));
    writeFileSync(transcriptFile, `${kept.join('\n')}\n`);
    const start = startFromTranscript(options.prefix.child(DIRECTIVE), readTranscript(transcriptFile));
    expect(start.judgeLast).toEqual({ stopReason: 'end_turn' });
    const resumed = await runForkLoop({
      ...options,
      transcript: new JsonlTranscript(transcriptFile),
      child: start.child,
      turnsDone: start.turnsDone,
      judgeLast: start.judgeLast,
    });
    expect(resumed.status).toBe('completed');
    expect(resumed.requests).toEqual([]); // judged and checked from the transcript alone
    expect(resumed.checks).toHaveLength(1);
  });
});
