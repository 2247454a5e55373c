import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP forwarder the tests control: point a stack's REDIS_URL or DATABASE_URL at it, then
 * `cut()` to make the dependency vanish (every open socket destroyed, new connections reset at once)
 * and `restore()` to bring it back. The machine's shared servers are never touched.
 */
export type TcpProxy = {
  port: number;
  /** `redis://127.0.0.1:<port>` or a PostgreSQL URL with the host and port replaced. */
  url(original: string): string;
  cut(): void;
  restore(): void;
  readonly isCut: boolean;
  /** Connections accepted since the start (refused ones included). */
  stats(): { accepted: number; refused: number; open: number };
  close(): Promise<void>;
};

export async function startTcpProxy(target: { host?: string; port: number }): Promise<TcpProxy> {
  const host = target.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  let cut = false;
  let accepted = 0;
  let refused = 0;

  const server: Server = createServer((client) => {
    accepted++;
    if (cut) {
      refused++;
      // A reset rather than a silent hang: clients see ECONNRESET at once, like a refused port.
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host, port: target.port });
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    url(original) {
      const u = new URL(original);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut() {
      cut = true;
      for (const s of sockets) s.resetAndDestroy();
      sockets.clear();
    },
    restore() {
      cut = false;
    },
    get isCut() {
      return cut;
    },
    stats: () => ({ accepted, refused, open: sockets.size }),
    async close() {
      cut = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
