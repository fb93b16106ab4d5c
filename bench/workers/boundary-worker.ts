// Bench worker: produces or consumes payloads so the main thread can time the crossing.
import { Packr } from 'msgpackr';
import { Piscina } from 'piscina';
import { attachFrozenPrefix } from '../../src/core/prefix/sab.ts';

const packr = new Packr({ useRecords: false });
const cache = new Map<string, unknown>();

export type BoundaryTask =
  | { kind: 'produce'; mode: 'clone' | 'msgpackr'; bytes: number }
  | { kind: 'dispatch-sab'; prefix: SharedArrayBuffer }
  | { kind: 'dispatch-string'; prefix: string }
  | { kind: 'dispatch-msgpackr'; prefix: Uint8Array };

/** A result shaped like a fork outcome, with `bytes` of final text. */
function payload(bytes: number): unknown {
  const key = String(bytes);
  if (!cache.has(key)) {
    cache.set(key, {
      status: 'completed',
      turns: 3,
      toolCalls: 2,
      requests: [
        {
          turn: 1,
          requestId: 'req_1',
          messageId: 'msg_1',
          usage: {
            input_tokens: 0,
            cache_creation_input_tokens: 120,
            cache_read_input_tokens: 48_500,
            output_tokens: 80,
          },
          stopReason: 'tool_use',
          sentAt: 1,
          startedAt: 2,
          endedAt: 3,
        },
      ],
      finalText: 'x'.repeat(bytes),
      filesChanged: ['src/a.ts'],
    });
  }
  return cache.get(key);
}

export default function run(task: BoundaryTask): unknown {
  switch (task.kind) {
    case 'produce': {
      const value = payload(task.bytes);
      if (task.mode === 'clone') return value;
      const packed = packr.pack(value);
      const owned = new Uint8Array(packed.byteLength);
      owned.set(packed); // pack() returns a view into a reused buffer: copy before moving it
      return Piscina.move(owned);
    }
    case 'dispatch-sab':
      return attachFrozenPrefix(task.prefix).byteLength;
    case 'dispatch-string':
      return task.prefix.length;
    case 'dispatch-msgpackr':
      return (packr.unpack(task.prefix) as { head: Uint8Array }).head.byteLength;
  }
}
