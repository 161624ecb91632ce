// Ports for a run's servers: free loopback ports of our own, or
// consecutive ones from --port-base. Never a server's well-known default, so a
// run cannot talk to (or be mistaken for) a Redis, etcd, ZooKeeper (client,
// quorum, election and AdminServer ports), Postgres, pgbouncer or Toxiproxy the user has.
import { createServer } from "node:net";

export const DEFAULT_PORTS = new Set([6379, 2379, 2380, 8474, 2181, 2888, 3888, 8080, 5432, 6432]);

// A server we start binds its port some time after we chose it (redis-server and
// etcd read it from their command line). A port the kernel handed out and took
// back (listen on 0) is an ephemeral one, and in that gap the kernel may give it
// to any outgoing connection or listener on the machine: with many runs and
// clients at once, sooner or later one does. Ports below the ephemeral range
// (Linux: 32768-60999) are handed out only by explicit binds, so we pick a random
// one there and check that nothing holds it.
const OWN_RANGE = { lo: 20000, hi: 32767 } as const;

/** A loopback port of our own that nothing listens on now, outside the kernel's ephemeral range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = OWN_RANGE.lo + Math.floor(Math.random() * (OWN_RANGE.hi - OWN_RANGE.lo + 1));
    if (DEFAULT_PORTS.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(false));
      s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
    });
    if (free) return port;
    if (attempt > 200) throw new Error(`no free port between ${OWN_RANGE.lo} and ${OWN_RANGE.hi} after ${attempt} tries`);
  }
}

/**
 * Hands out ports for one run: from `base` upward if given, else free ones, never
 * the same one twice. A free port is only free until its server binds it, and the
 * run's servers start after all their ports are chosen: without remembering, two
 * draws could give one run the same free port (a ZooKeeper ensemble takes nine,
 * and once zk-3's client port was zk-1's election port: zk-1 could not bind it).
 */
export class PortPlan {
  private nextPort: number;
  private readonly given = new Set<number>();
  constructor(private readonly base: number) {
    this.nextPort = base;
  }
  async take(): Promise<number> {
    if (this.base === 0) {
      for (;;) {
        const port = await freePort();
        if (this.given.has(port)) continue;
        this.given.add(port);
        return port;
      }
    }
    while (DEFAULT_PORTS.has(this.nextPort)) this.nextPort++;
    return this.nextPort++;
  }
}
