import { describe, expect, it } from 'vitest';
import { boardLines, exchangeLine } from '../../../src/integrations/proxy/report/board.ts';
import { blankRecord } from '../../../src/integrations/proxy/exchange/refuse.ts';
import type { ProxySummary } from '../../../src/integrations/proxy/report/summary.ts';
import { terminalSafe } from '../../../src/core/util/terminal-text.ts';

const HOSTILE = 'm\u001b]0;title\u0007\u001b[2J\u009b31m\u202egnp.exe\r\nforged';

describe('what the proxy prints on a terminal', () => {
  it('escapes every control character: OSC titles, screen clears, C1 CSI, bidi overrides, newlines', () => {
    expect(terminalSafe(HOSTILE)).toBe('m\\x1b]0;title\\x07\\x1b[2J\\u009b31m\\u202egnp.exe\\x0d\\x0aforged');
    expect(terminalSafe('plain text, ünïcødé, 漢字, emoji 🎉')).toBe('plain text, ünïcødé, 漢字, emoji 🎉');
  });

  it('an exchange line carries no raw control character from the model, path or error', () => {
    const record = {
      ...blankRecord(1, 'POST', `/v1/messages?x=${HOSTILE}`, 0),
      status: 200,
      model: HOSTILE,
      error: `upstream said ${HOSTILE}`,
    };
    const line = exchangeLine(record);
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    expect(line).toContain('m\\x1b]0;title\\x07');
  });

  it('the live board too (an upstream URL or a miss detail from the wire)', () => {
    const summary = {
      upstream: `http://h/${HOSTILE}`,
      requests: { total: 1, errors: 0, held: 0, stripped_billing_block: 0 },
      usage: { input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
      cache: { hit_ratio: 0 },
      cost_usd: { actual: 0, no_cache: 0, saved_vs_no_cache: 0, unpriced_requests: 0 },
      saved_by_proxy_usd: { warm_first: 0, strip_billing_block: 0, total: 0 },
      fanouts: [],
    } as unknown as ProxySummary;
    const miss = {
      ...blankRecord(2, 'POST', '/v1/messages', 0),
      diagnosis: {
        reason: 'system_changed',
        detail: HOSTILE,
        firstDiff: undefined,
        sharedBlocks: 0,
        relatedTo: undefined,
        predictedReadTokens: 0,
        missedTokens: 0,
      },
    } as Parameters<typeof boardLines>[3];
    for (const line of boardLines(summary, 0, 0, miss))
      // eslint-disable-next-line no-control-regex
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
  });
});
