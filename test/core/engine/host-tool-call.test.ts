import { describe, expect, it } from 'vitest';
import { ForkEngine } from '../../../src/core/engine/engine.ts';
import { findForkDirective } from '../../../src/integrations/emulator/scripts/conversation.ts';
import { formatReport } from '../../../src/integrations/emulator/scripts/directive.ts';
import type { ScriptedModel } from '../../../src/integrations/emulator/scripts/types.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import type { PermissionRequest } from '../../../src/core/tools/permissions.ts';
import { sharedEmulator, workspace } from './helpers.ts';

// Issue 43, the first finding as its attacker played it, through a real worker: a Qwen Code
// fork names the embedder's host tool in `tool_call {name, arguments}`. The policy denied it
// (or said ask), and the handler ran anyway, the policy asked 0 times.

/** Calls post_comment through tool_call on its first turn, then reports what it got. */
const caller: ScriptedModel = {
  name: 'host-tool-call',
  respond({ request }) {
    const fork = findForkDirective(request.messages);
    if (fork?.message === request.messages.length - 1)
      return {
        content: [
          { type: 'tool_use', name: 'tool_call', input: { name: 'post_comment', arguments: { body: 'spam' } } },
        ],
        stop_reason: 'tool_use',
      };
    const text = formatReport({ scope: 'x', result: 'done', keyFiles: [], filesChanged: [], issues: [] });
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};

const emulator = sharedEmulator({ scripts: [caller], script: 'host-tool-call' });

const schema = { type: 'object', properties: {} };
const parent = (tag: string) =>
  captureSnapshot({
    model: 'claude-sonnet-4-6',
    max_tokens: 4096,
    system: [{ type: 'text', text: `${tag} ${'You are a support engineer. '.repeat(400)}` }],
    tools: [
      {
        name: 'read_file',
        description: 'Read a file.',
        input_schema: { type: 'object', properties: { file_path: { type: 'string' } } },
      },
      { name: 'tool_call', description: 'Call a deferred tool.', input_schema: schema },
      { name: 'post_comment', description: 'Post a comment (visible to the customer).', input_schema: schema },
    ],
    messages: [{ role: 'user', content: 'Triage.' }],
  });

describe("a host tool through Qwen Code's tool_call", () => {
  it('is refused when the policy denies it, and asked about when it says ask; the handler never runs', async () => {
    const posted: unknown[] = [];
    for (const decision of ['deny', 'ask'] as const) {
      const asked: PermissionRequest[] = [];
      const engine = await ForkEngine.create({
        baseURL: emulator.current.url,
        apiKey: 'test',
        workspace: workspace(),
        pool: { maxThreads: 1 },
        toolSet: 'qwen-code',
        permissions: { tools: { post_comment: decision } },
        onPermission: (request) => {
          asked.push(request);
          return { allow: false, reason: 'not today' };
        },
        hostTools: { post_comment: { execute: (input) => (posted.push(input), 'comment posted') } },
      });
      try {
        const fan = engine.fanOut(parent(`${decision}-${Date.now()}`), ['post the comment']);
        const codes: (string | undefined)[] = [];
        for await (const e of fan) if (e.type === 'tool-call') codes.push(e.code);
        await fan.settled();
        expect(codes, decision).toEqual(['PERMISSION_DENIED']);
        expect(
          asked.map((r) => [r.tool, r.input]),
          decision,
        ).toEqual(decision === 'ask' ? [['post_comment', { body: 'spam' }]] : []);
      } finally {
        await engine.close();
      }
    }
    expect(posted).toEqual([]);
  });
});
