import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { runForkLoop } from '../../../src/core/loop/run-fork.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';
import { driftCheckedFetch } from '../../../src/core/prefix/drift.ts';
import { streamMessageBytes } from '../../../src/providers/anthropic/send.ts';
import { createToolExecutor } from '../../../src/core/tools/executor.ts';
import { bigSnapshot, sharedEmulator, workspace } from '../engine/helpers.ts';

const emulator = sharedEmulator({ script: 'refactor' });

describe('runForkLoop (in-thread, real SDK, real emulator, real files)', () => {
  it('reads, edits, reports; each turn reads the previous turn from cache (moving marker)', async () => {
    const ws = workspace({
      'users.ts': 'import { fetchData } from "./http";\nexport const load = () => fetchData("/users");\n',
    });
    const prefix = freeze(bigSnapshot(`loop-${Date.now()}`));
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: emulator.current.url,
      maxRetries: 0,
      fetch: driftCheckedFetch({ head: prefix.head }),
    });
    const events: string[] = [];
    const outcome = await runForkLoop({
      prefix,
      child: prefix.child('rename fetchData to loadData in users.ts'),
      transport: { send: (body, options) => streamMessageBytes(client, body, options) },
      tools: createToolExecutor({ workspace: ws }),
      onEvent: (e) => events.push(e.type === 'tool-call' ? `tool-call:${e.name}` : e.type),
    });
    expect(outcome.status).toBe('completed');
    expect(readFileSync(join(ws, 'users.ts'), 'utf8')).not.toContain('fetchData');
    expect(readFileSync(join(ws, 'users.ts'), 'utf8')).toContain('loadData("/users")');
    expect(outcome.filesChanged).toEqual(['users.ts']);
    expect(outcome.report?.missing).toEqual([]);
    expect(events.filter((e) => e.startsWith('tool-call'))).toContain('tool-call:edit_file');
    expect(outcome.turns).toBeGreaterThanOrEqual(3);
    // every later turn reads everything the turn before it sent (the child's moving marker)
    for (let i = 1; i < outcome.requests.length; i++) {
      const before = outcome.requests[i - 1]!.usage;
      const sentBefore = before.input_tokens + before.cache_creation_input_tokens + before.cache_read_input_tokens;
      expect(outcome.requests[i]!.usage.cache_read_input_tokens).toBe(sentBefore);
    }
    // the child's own messages alternate assistant / user(tool results) and end with the model
    expect(outcome.messages.map((m) => m.role).join(',')).toMatch(/^(assistant,user,)+assistant$/);
  });

  it('reports an API error as a failed outcome with the status, keeping completed turns', async () => {
    const prefix = freeze(bigSnapshot('api-error'));
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: emulator.current.url,
      maxRetries: 0,
      defaultHeaders: { 'x-forkcache-fault': '529' },
    });
    const outcome = await runForkLoop({
      prefix,
      child: prefix.child('read users.ts and report'),
      transport: { send: (body, options) => streamMessageBytes(client, body, options) },
      tools: createToolExecutor({ workspace: workspace() }),
      retry: { retries: 0, baseMs: 0, maxMs: 0 },
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({ code: 'FORK_API_ERROR', data: { status: 529, type: 'overloaded_error' } });
    expect(outcome.turns).toBe(1);
  });
});
