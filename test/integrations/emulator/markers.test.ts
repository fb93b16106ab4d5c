import { describe, expect, it } from 'vitest';
import type { RequestBlock } from '../../../src/integrations/emulator/types.ts';
import { collectMarkers } from '../../../src/integrations/emulator/cache/markers.ts';
import { render, request, text } from './cache-fixtures.ts';

const markersOf = (blocks: RequestBlock[], automatic?: { type: 'ephemeral'; ttl?: '5m' | '1h' }) => {
  const req = request({
    messages: [{ role: 'user', content: blocks }],
    ...(automatic ? { cache_control: automatic } : {}),
  });
  return collectMarkers(render(req).positions, req.cache_control);
};

const caught = (fn: () => unknown): { code?: string; message?: string; status?: number } => {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string; status: number };
  }
  throw new Error('expected a throw');
};

describe('cache markers', () => {
  it('rejects a fifth marker with the API message', () => {
    const blocks = Array.from({ length: 5 }, (_, i) => text(1, `m${i}`, '5m'));
    expect(caught(() => markersOf(blocks))).toMatchObject({
      code: 'EMULATOR_TOO_MANY_BREAKPOINTS',
      status: 400,
      message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    });
    expect(markersOf(blocks.slice(0, 4))).toHaveLength(4);
  });

  it('rejects a 1h marker after a 5m marker, accepts 1h before 5m', () => {
    const err = caught(() => markersOf([text(1, 'a', '5m'), text(1, 'b', '1h')]));
    expect(err).toMatchObject({ code: 'EMULATOR_INVALID_REQUEST', status: 400 });
    expect(err.message).toContain('messages.0.content.1.cache_control');
    expect(markersOf([text(1, 'a', '1h'), text(1, 'b', '5m')]).map((m) => m.ttl)).toEqual(['1h', '5m']);
  });

  it('places the automatic marker on the last cacheable block', () => {
    expect(markersOf([text(1, 'a'), text(1, 'b')], { type: 'ephemeral' })).toEqual([
      { position: 1, ttl: '5m', automatic: true },
    ]);
    const withThinking = request({
      messages: [
        { role: 'user', content: [text(1, 'q')] },
        { role: 'assistant', content: [text(1, 'a'), { type: 'thinking', thinking: 'hmm', signature: 's' }] },
      ],
      cache_control: { type: 'ephemeral' },
    });
    expect(collectMarkers(render(withThinking).positions, withThinking.cache_control)).toEqual([
      { position: 1, ttl: '5m', automatic: true },
    ]);
  });

  it('treats an automatic marker on an already-marked block as a no-op when the TTL matches', () => {
    expect(markersOf([text(1, 'a'), text(1, 'b', '5m')], { type: 'ephemeral', ttl: '5m' })).toEqual([
      { position: 1, ttl: '5m', automatic: false },
    ]);
    expect(caught(() => markersOf([text(1, 'a'), text(1, 'b', '5m')], { type: 'ephemeral', ttl: '1h' }))).toMatchObject(
      { status: 400 },
    );
  });

  it('counts the automatic marker among the four', () => {
    const four = Array.from({ length: 4 }, (_, i) => text(1, `m${i}`, '5m'));
    expect(caught(() => markersOf([...four, text(1, 'z')], { type: 'ephemeral' }))).toMatchObject({
      code: 'EMULATOR_TOO_MANY_BREAKPOINTS',
      message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    });
  });

  it('honours the order rule with the automatic marker too', () => {
    expect(caught(() => markersOf([text(1, 'a', '5m'), text(1, 'b')], { type: 'ephemeral', ttl: '1h' }))).toMatchObject(
      { status: 400 },
    );
  });
});
