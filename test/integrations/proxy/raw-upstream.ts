import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** What a hostile upstream does with one request, once it has read it whole. */
export type Behaviour = (socket: Socket) => void;

/** A well-formed Messages answer (JSON), so a normal request through the proxy can succeed. */
export const NORMAL_BODY = JSON.stringify({
  id: 'msg_normal',
  type: 'message',
  role: 'assistant',
  model: 'claude-opus-5-5',
  content: [{ type: 'text', text: 'fine' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
});

export const normal: Behaviour = (socket) =>
  socket.write(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(NORMAL_BODY)}\r\n\r\n${NORMAL_BODY}`,
  );

/** Write these bytes as the whole answer, then close. */
export const raw =
  (bytes: string): Behaviour =>
  (socket) =>
    socket.end(bytes);

/** A raw TCP server on 127.0.0.1 that plays one behaviour per request, in order, then answers normally. */
export interface RawUpstream {
  url: string;
  /** Requests read so far. */
  readonly requests: number;
  close(): Promise<void>;
}

export async function rawUpstream(behaviours: Behaviour[]): Promise<RawUpstream> {
  const queue = [...behaviours];
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      // one request at a time: headers, then content-length bytes of body
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.subarray(end + 4 + length);
        requests++;
        (queue.shift() ?? normal)(socket);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
