import { connect, type Socket } from 'node:net';

/** What each of many raw client sockets saw: the first bytes the server wrote (if any), and that it closed. */
export interface SlowClient {
  socket: Socket;
  got: string;
  closed: Promise<void>;
}

/**
 * Open `count` connections to 127.0.0.1:`port` (in batches, so the listen backlog keeps up) and
 * write `first` on each, then nothing more: a slowloris. Each `closed` resolves on the
 * socket's own close event, whoever closed it.
 */
export async function slowClients(port: number, count: number, first: string): Promise<SlowClient[]> {
  const clients: SlowClient[] = [];
  for (let start = 0; start < count; start += 250) {
    const batch = Array.from({ length: Math.min(250, count - start) }, () => {
      const socket = connect(port, '127.0.0.1');
      const client: SlowClient = {
        socket,
        got: '',
        closed: new Promise<void>((resolve) => socket.once('close', () => resolve())),
      };
      socket.on('error', () => undefined);
      socket.on('data', (d: Buffer) => (client.got += d.toString('latin1')));
      clients.push(client);
      return new Promise<void>((resolve) => {
        socket.once('connect', () => (first ? socket.write(first, () => resolve()) : resolve()));
        socket.once('close', () => resolve());
      });
    });
    await Promise.all(batch);
  }
  return clients;
}
