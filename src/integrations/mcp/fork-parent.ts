import { ForkcacheError } from '../../core/util/errors.ts';
import { captureSnapshot, type ParentSnapshot } from '../../core/fork/snapshot.ts';
import type { CapturedForkCall } from '../proxy/fork-calls.ts';

/**
 * The children's parent: the client's request as it went upstream, followed by the assistant
 * turn that called the fork tool, unchanged. The request's own bytes are what its answer
 * cached (its last marker sits on its last user turn), so every child's first request reads
 * that entry and pays only for the turn and its directive. The fork layout then answers every
 * call of the turn with the same placeholder and appends the directive, as Claude Code's own
 * forks do.
 */
export function forkParent(captured: CapturedForkCall): ParentSnapshot {
  let request: Record<string, unknown>;
  try {
    request = JSON.parse(captured.body.toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ForkcacheError('SNAPSHOT_INVALID', `the request of exchange ${captured.seq} is not JSON`, { cause: err });
  }
  const messages = request['messages'];
  if (!Array.isArray(messages))
    throw new ForkcacheError('SNAPSHOT_INVALID', `the request of exchange ${captured.seq} has no messages`);
  return captureSnapshot({
    ...request,
    messages: [...(messages as unknown[]), { role: 'assistant', content: captured.turn.content }],
  });
}
