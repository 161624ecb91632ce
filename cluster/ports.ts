// Ports for a run's servers: free loopback ports picked by the kernel, or
// consecutive ones from --port-base. Never a server's well-known default, so a
// run cannot talk to (or be mistaken for) a Redis, etcd or Toxiproxy the user has.
import { createServer } from "node:net";

export const DEFAULT_PORTS = new Set([6379, 2379, 2380, 8474]);

async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once("error", reject);
      s.listen(0, "127.0.0.1", () => {
        const addr = s.address();
        const p = typeof addr === "object" && addr ? addr.port : 0;
        s.close(() => resolve(p));
      });
    });
    if (!DEFAULT_PORTS.has(port)) return port;
  }
}

/** Hands out ports for one run: from `base` upward if given, else free ones. */
export class PortPlan {
  private nextPort: number;
  constructor(private readonly base: number) {
    this.nextPort = base;
  }
  async take(): Promise<number> {
    if (this.base === 0) return freePort();
    while (DEFAULT_PORTS.has(this.nextPort)) this.nextPort++;
    return this.nextPort++;
  }
}
