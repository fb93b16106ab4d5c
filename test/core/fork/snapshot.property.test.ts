import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ForkcacheError } from '../../../src/core/util/errors.ts';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';

const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) }),
  fc.record({
    type: fc.constant('tool_use'),
    id: fc.oneof(fc.constantFrom('t1', 't2', ''), fc.integer()),
    name: fc.string(),
    input: fc.oneof(fc.object(), fc.string()),
  }),
  fc.record({
    type: fc.constant('tool_result'),
    tool_use_id: fc.oneof(fc.constantFrom('t1', 't2', 'zz'), fc.constant(undefined)),
    content: fc.oneof(
      fc.string(),
      fc.array(fc.record({ type: fc.constant('text'), text: fc.string() }), { maxLength: 2 }),
      fc.integer(),
    ),
  }),
  fc.anything(),
);
const message = fc.oneof(
  fc.record({
    role: fc.constantFrom('user', 'assistant', 'system', 'robot'),
    content: fc.oneof(fc.string(), fc.array(block, { maxLength: 4 })),
  }),
  fc.anything(),
);
const request = fc.oneof(
  fc.record(
    {
      model: fc.oneof(fc.constant('claude-sonnet-4-6'), fc.string(), fc.integer()),
      system: fc.oneof(fc.string(), fc.array(block, { maxLength: 2 }), fc.anything()),
      tools: fc.oneof(
        fc.array(fc.record({ name: fc.oneof(fc.constantFrom('a', 'b', ''), fc.integer()) }), { maxLength: 3 }),
        fc.anything(),
      ),
      messages: fc.oneof(fc.array(message, { maxLength: 5 }), fc.anything()),
    },
    { requiredKeys: [] },
  ),
  fc.anything(),
);

describe('captureSnapshot on arbitrary input (property)', () => {
  it('either returns a frozen snapshot or throws SNAPSHOT_INVALID naming a path — never anything else', () => {
    fc.assert(
      fc.property(request, (input) => {
        let snapshot;
        try {
          snapshot = captureSnapshot(input);
        } catch (err) {
          expect(err).toBeInstanceOf(ForkcacheError);
          expect((err as ForkcacheError).code).toBe('SNAPSHOT_INVALID');
          expect((err as Error).message).toMatch(/^snapshot: (\(root\)|model|system|tools|messages|cache_control)/);
          return;
        }
        expect(Object.isFrozen(snapshot)).toBe(true);
        expect(typeof snapshot.model).toBe('string');
        expect(Array.isArray(snapshot.messages)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
