import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * A service on the host's 127.0.0.1, as the emulator, its stats and Redis are: it answers any
 * connection with a plain HTTP response whose body is `host service`. What a sandboxed command
 * must not reach (issue 24, route 4) unless the run allows the network.
 */
export async function startHostService(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.end('HTTP/1.0 200 OK\r\ncontent-length: 13\r\n\r\nhost service\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One host service for a test file: started before its tests, closed after them. */
export function sharedHostService(): { readonly port: number } {
  let service: Awaited<ReturnType<typeof startHostService>> | undefined;
  beforeAll(async () => {
    service = await startHostService();
  });
  afterAll(() => service?.close());
  return {
    get port(): number {
      if (!service) throw new Error('sharedHostService: used outside a test');
      return service.port;
    },
  };
}
