import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A Kubernetes Service for `npm run scale`: one address whose connections go to the replicas in turn,
 * skipping one that refuses (a killed replica, as its endpoint would leave the Service). Balances
 * connections, not requests, as kube-proxy does; counts what each replica was given.
 */
export class ServiceStandIn {
  readonly #ports: readonly number[];
  readonly #server: Server;
  /** Connections handed to each replica, by index. */
  readonly connections: number[];
  readonly #open = new Set<Socket>();
  #next = 0;

  constructor(ports: readonly number[]) {
    this.#ports = ports;
    this.connections = ports.map(() => 0);
    this.#server = createServer((client) => {
      this.#open.add(client);
      client.once('close', () => this.#open.delete(client));
      this.#forward(client, 0);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (typeof address !== 'object' || address === null) throw new Error('the stand-in has no port');
    return `http://127.0.0.1:${address.port}`;
  }

  #forward(client: Socket, tried: number): void {
    if (tried >= this.#ports.length) {
      client.destroy();
      return;
    }
    const index = this.#next++ % this.#ports.length;
    client.pause();
    const upstream = connect(this.#ports[index]!, '127.0.0.1');
    upstream.once('connect', () => {
      this.connections[index]!++;
      client.pipe(upstream).pipe(client);
      client.resume();
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.once('error', end);
      upstream.once('error', end);
      client.once('close', end);
      upstream.once('close', end);
    });
    upstream.once('error', () => {
      if (upstream.listenerCount('connect') > 0) {
        upstream.removeAllListeners('connect');
        this.#forward(client, tried + 1);
      }
    });
  }

  close(): Promise<void> {
    for (const socket of this.#open) socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
