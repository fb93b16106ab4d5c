import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { formatReport } from '../../../src/integrations/emulator/scripts/directive.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { SCRIPT_HEADER } from '../../../src/integrations/emulator/scripts/types.ts';
import { runForkLoop } from '../../../src/core/loop/run-fork.ts';
import type { TranscriptSink } from '../../../src/core/loop/transcript-sink.ts';
import type { ForkOutcome } from '../../../src/core/loop/types.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

// The fork loop never throws, and writes its transcript's end line once: a sink whose `end`
// throws (a full disk) once or every time gives the same outcome, not a second line nor a
// rejection.

const REPORT = formatReport({ scope: 'the task', result: 'done', keyFiles: [], filesChanged: [], issues: [] });
const scripts: ScriptedModel[] = [{ name: 'reports', respond: () => ({ content: [{ type: 'text', text: REPORT }] }) }];
const emulator = sharedEmulator({ scripts });

/** A transcript that records the end lines it was asked for and fails the first `failures` of them. */
function failingSink(failures: number): TranscriptSink & { ends: string[] } {
  const ends: string[] = [];
  let left = failures;
  return {
    ends,
    turn: () => {},
    toolStart: () => {},
    toolEnd: () => {},
    end(outcome: ForkOutcome) {
      ends.push(outcome.status);
      if (left-- > 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    },
  };
}

async function run(transcript: TranscriptSink): Promise<ForkOutcome> {
  const prefix = freeze(bigSnapshot(`end-${Date.now()}`));
  const client = new Anthropic({
    apiKey: 'test',
    baseURL: emulator.current.url,
    maxRetries: 0,
    defaultHeaders: { [SCRIPT_HEADER]: 'reports' },
  });
  return runForkLoop({
    prefix,
    child: prefix.child('do the task'),
    transport: { send: (body, options) => streamMessageBytes(client, body, options) },
    tools: createToolExecutor({ workspace: workspace() }),
    transcript,
  });
}

describe('a transcript whose end line cannot be written', () => {
  it('writes the end line once when it works', async () => {
    const sink = failingSink(0);
    expect((await run(sink)).status).toBe('completed');
    expect(sink.ends).toEqual(['completed']);
  });

  for (const failures of [1, Infinity]) {
    it(`fails the fork with the write's error, tried once, its turn kept (the write fails ${failures === 1 ? 'once' : 'every time'})`, async () => {
      const sink = failingSink(failures);
      const outcome = await run(sink);
      expect(outcome.status).toBe('failed');
      expect(outcome.error?.message).toContain('ENOSPC');
      expect(outcome.turns).toBe(1);
      expect(outcome.finalText).toContain('Result: done');
      expect(sink.ends).toEqual(['completed']);
    });
  }
});
