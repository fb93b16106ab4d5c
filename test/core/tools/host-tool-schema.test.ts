import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { HostTool } from '../../../src/index.ts';
import { parseHostTools, runHostTool } from '../../../src/core/tools/host-tools.ts';

const ctx = () => ({ signal: new AbortController().signal, forkId: 'f1', toolUseId: 'toolu_1' });

describe('a host tool with an input schema', () => {
  const seen: unknown[] = [];
  const lookup: HostTool<{ name: string; limit: number }> = {
    inputSchema: z.object({ name: z.string(), limit: z.number().int().default(3) }),
    execute: (input) => {
      seen.push(input);
      return `user ${input.name}: ${input.limit} tickets`;
    },
  };

  it('gives execute the typed, parsed input (defaults applied)', async () => {
    expectTypeOf(lookup.execute).parameter(0).toEqualTypeOf<{ name: string; limit: number }>();
    seen.length = 0;
    expect(await runHostTool('lookup', lookup as HostTool, { name: 'ann' }, ctx())).toEqual({
      isError: false,
      content: 'user ann: 3 tickets',
    });
    expect(seen).toEqual([{ name: 'ann', limit: 3 }]);
  });

  it('answers a mismatch with an error naming the field, and never runs execute', async () => {
    seen.length = 0;
    const result = await runHostTool('lookup', lookup as HostTool, { name: 7 }, ctx());
    expect(result).toMatchObject({ isError: true, code: 'TOOL_INPUT_INVALID' });
    expect(result.content).toMatch(/^lookup: the input does not match its schema: name: /);
    expect(seen).toEqual([]);
  });

  it('is refused at the engine when it is not a Standard Schema', () => {
    expect(() =>
      parseHostTools({ lookup: { inputSchema: { parse() {} }, execute: () => '' } }, 'fanOut options'),
    ).toThrow(/hostTools\.lookup\.inputSchema: expected a Standard Schema/);
  });
});
