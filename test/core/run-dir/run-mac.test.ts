import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chainSeed, signLine, verifyLines } from '../../../src/core/run-dir/run-mac.ts';
import { keyIdOf, type RunKey } from '../../../src/core/run-dir/run-key.ts';

// The chained MAC of transcript records (issue 24, route 2): what resume trusts must be what
// forkcache wrote, in the order and the file it wrote it.

const keyOf = (): RunKey => {
  const bytes = randomBytes(32);
  return { bytes, id: keyIdOf(bytes) };
};
const key = keyOf();
const pathOf = (forkId: string) => `/runs/fo001-abc/forks/${forkId}.jsonl`;

function signed(path: string, records: object[], k: RunKey = key): Array<{ line: number; raw: string }> {
  let chain = chainSeed(k, path);
  return records.map((r, i) => {
    const s = signLine(k, chain, JSON.stringify(r));
    chain = s.mac;
    return { line: i + 1, raw: s.line };
  });
}

const records = [1, 2, 3, 4].map((turn) => ({
  v: 1,
  type: 'turn',
  turn,
  note: `a "quoted" ,"mac":"x"} value ${turn}`,
}));

describe('chained MACs of transcript records', () => {
  it('verifies what was written, and a cut at a record boundary (the documented limit)', () => {
    const lines = signed(pathOf('f1'), records);
    expect(verifyLines(key, pathOf('f1'), lines)).toBeUndefined();
    expect(verifyLines(key, pathOf('f1'), lines.slice(0, 2))).toBeUndefined();
    expect(JSON.parse(lines[0]!.raw)).toMatchObject({
      turn: 1,
      mac: expect.stringMatching(/^[0-9a-f]{8}\.[0-9a-f]{32}$/),
    });
  });

  it('refuses a changed, dropped, reordered or moved record, naming its line', () => {
    const lines = signed(pathOf('f1'), records);
    const changed = lines.map((l, i) => (i === 2 ? { ...l, raw: l.raw.replace('value 3', 'value 9') } : l));
    expect(verifyLines(key, pathOf('f1'), changed)).toMatchObject({ kind: 'tampered', line: 3 });
    const dropped = [lines[0]!, lines[2]!, lines[3]!];
    expect(verifyLines(key, pathOf('f1'), dropped)).toMatchObject({ kind: 'tampered', line: 3 });
    expect(verifyLines(key, pathOf('f1'), [lines[1]!, lines[0]!])).toMatchObject({ kind: 'tampered' });
    // the same records in another fork's transcript
    expect(verifyLines(key, pathOf('f2'), lines)).toMatchObject({ kind: 'tampered', line: 1 });
  });

  it('tells an unsigned record and one signed with another key apart', () => {
    expect(verifyLines(key, pathOf('f1'), [{ line: 1, raw: JSON.stringify(records[0]) }])).toMatchObject({
      kind: 'unsigned',
      signed: false,
    });
    const other = keyOf();
    expect(verifyLines(key, pathOf('f1'), signed(pathOf('f1'), records, other))).toMatchObject({
      kind: 'other-key',
      keyId: other.id,
    });
    // an unsigned line among signed ones was inserted: `signed` says the file was this key's
    const mixed = [...signed(pathOf('f1'), records.slice(0, 2)), { line: 3, raw: JSON.stringify(records[2]) }];
    expect(verifyLines(key, pathOf('f1'), mixed)).toMatchObject({ kind: 'unsigned', line: 3, signed: true });
  });
});
