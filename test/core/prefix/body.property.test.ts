import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { captureSnapshot } from '../../../src/core/fork/snapshot.ts';
import { childRequestBody, childRequestObject } from '../../../src/core/prefix/body.ts';
import { freeze } from '../../../src/core/prefix/freeze.ts';

const text = fc.string({ unit: 'binary', maxLength: 40 });
const marker = fc.option(fc.constantFrom({ type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' }), { nil: undefined });
const withMarker = <T extends object>(block: T, m: object | undefined): T =>
  m ? { ...block, cache_control: m } : block;

const textBlock = fc
  .tuple(
    text.filter((t) => t.length > 0),
    marker,
  )
  .map(([t, m]) => withMarker({ type: 'text', text: t }, m));

/** A valid parent request: alternating turns, every tool_use answered except possibly at the end. */
const parentRequest = fc
  .record({
    tools: fc.array(fc.record({ description: text, cache: marker }), { maxLength: 3 }),
    system: fc.oneof(fc.constant(undefined), text, fc.array(textBlock, { minLength: 1, maxLength: 2 })),
    turns: fc.array(
      fc.record({
        user: fc.oneof(text, fc.array(textBlock, { minLength: 1, maxLength: 2 })),
        say: textBlock,
        calls: fc.integer({ min: 0, max: 2 }),
      }),
      { maxLength: 4 },
    ),
    endsWithModel: fc.boolean(),
    thinking: fc.boolean(),
  })
  .map(({ tools, system, turns, endsWithModel, thinking }) => {
    const messages: any[] = [];
    let pending: string[] = [];
    let id = 0;
    turns.forEach((turn, i) => {
      const results = pending.map((toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: 'ok' }));
      const userContent =
        results.length > 0 ? [...results, ...(typeof turn.user === 'string' ? [] : turn.user)] : turn.user;
      messages.push({
        role: 'user',
        content: userContent === '' || (Array.isArray(userContent) && userContent.length === 0) ? 'go' : userContent,
      });
      if (i === turns.length - 1 && !endsWithModel) {
        pending = [];
        return;
      }
      const calls = Array.from({ length: turn.calls }, () => ({
        type: 'tool_use',
        id: `toolu_${id++}`,
        name: 'agent',
        input: { directive: 'd' },
      }));
      messages.push({ role: 'assistant', content: [turn.say, ...calls] });
      pending = calls.map((c) => c.id);
    });
    const request: Record<string, unknown> = {
      model: 'claude-opus-5-5',
      tools: tools.map((t, i) =>
        withMarker({ name: `tool_${i}`, description: t.description, input_schema: { type: 'object' } }, t.cache),
      ),
      messages,
      max_tokens: 100,
    };
    if (system !== undefined) request['system'] = system;
    if (thinking) request['thinking'] = { type: 'enabled', budget_tokens: 1024 };
    // the API allows at most 4 markers: drop the rest, as a parent that was accepted would have
    let markers = 0;
    const cap = (block: any): void => {
      if (block && typeof block === 'object' && block.cache_control && ++markers > 4) delete block.cache_control;
    };
    (request['tools'] as any[]).forEach(cap);
    if (Array.isArray(request['system'])) (request['system'] as any[]).forEach(cap);
    for (const m of messages) if (Array.isArray(m.content)) m.content.forEach(cap);
    return request;
  });

const directive = text.filter((t) => t.trim().length > 0);

describe('childRequestBody (property)', () => {
  it('for any snapshot and two directives: same bytes up to the end of the head, valid JSON equal to the object build, at most 4 markers in TTL order', () => {
    fc.assert(
      fc.property(
        parentRequest,
        directive,
        directive,
        fc.constantFrom('claude' as const, 'qwen' as const),
        (request, d1, d2, layout) => {
          const prefix = freeze(captureSnapshot(request), { layout });
          const c1 = prefix.child(d1);
          const c2 = prefix.child(d2);
          const b1 = childRequestBody(prefix, c1, { max_tokens: 64 });
          const b2 = childRequestBody(prefix, c2, { max_tokens: 64 });
          const head = Buffer.from(prefix.head);
          expect(Buffer.from(b1.subarray(0, prefix.byteLength)).equals(head)).toBe(true);
          expect(Buffer.from(b2.subarray(0, prefix.byteLength)).equals(head)).toBe(true);
          const parsed = JSON.parse(new TextDecoder().decode(b1));
          expect(parsed).toEqual(childRequestObject(prefix.shared, c1, { max_tokens: 64 }));
          expect(JSON.stringify(parsed).split('"cache_control"').length - 1).toBeLessThanOrEqual(4);
          expect(prefix.shared.markers.length).toBeLessThanOrEqual(2);
          // 1h markers never follow 5m ones, in prefix order tools -> system -> messages
          const blocks = [
            ...(parsed.tools ?? []),
            ...(Array.isArray(parsed.system) ? parsed.system : []),
            ...parsed.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])),
          ];
          const ttls = blocks.filter((b: any) => b.cache_control).map((b: any) => b.cache_control.ttl ?? '5m');
          expect(ttls.slice(ttls.indexOf('5m') >= 0 ? ttls.indexOf('5m') : ttls.length)).not.toContain('1h');
        },
      ),
      { numRuns: 300 },
    );
  });
});
